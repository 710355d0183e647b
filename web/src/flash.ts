/**
 * A one-line message that outlives the navigation it comes with (an agent deleted from its own
 * page, whose page then goes): the shell (svc-app.ts) shows it above the next view.
 */
let pending: string | null = null

export function flash(text: string): void {
  pending = text
  dispatchEvent(new CustomEvent('svc-flash'))
}

/** The message, once: the shell takes it when told. */
export function takeFlash(): string | null {
  const t = pending
  pending = null
  return t
}
