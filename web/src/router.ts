/** The current view from the URL hash: `#/agents/abc?project=p` -> {parts: ['agents','abc'], query}. */
export interface Route {
  parts: string[]
  query: URLSearchParams
}

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#\/?/, '')
  const [path, qs = ''] = raw.split('?')
  return {parts: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(qs)}
}

export const go = (hash: string) => {
  location.hash = hash
}

/**
 * The page a signed-out browser was sent from (`/?return_to=/projects/p/artifacts/a`), to go
 * back to once signed in. Only a path on this Hub: never `//host`, a backslash or a control
 * character (an open redirect would let a link send a fresh session elsewhere).
 */
export function returnTo(): string | null {
  const raw = new URLSearchParams(location.search).get('return_to')
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(raw) || raw.length > 2048) return null
  const u = new URL(raw, location.origin)
  return u.origin === location.origin ? u.pathname + u.search + u.hash : null
}
