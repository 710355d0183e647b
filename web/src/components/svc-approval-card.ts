import {LitElement, html, css} from 'lit'
import type {ApprovalDto} from '../../../src/api/approval.js'
import {api, ApiError} from '../api.js'
import {shared} from '../styles.js'

/** How long ago an ISO time was, in words a person scans (`12 s ago`, `3 min ago`). */
export function ago(at: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(at)) / 1000))
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  return `${Math.floor(s / 3600)} h ago`
}

/** Who decided an approval, in words. */
export function decidedByText(a: ApprovalDto): string {
  const d = a.decidedBy
  if (!d) return a.state === 'expired' ? 'nobody in time (the terminal can still answer)' : ''
  switch (d.kind) {
    case 'user':
      return `a person (${d.id})`
    case 'agent':
      return `its parent agent (${d.id})`
    case 'rule':
      return `rule ${d.index} of approvals.rules`
    default:
      return 'the terminal'
  }
}

/**
 * One permission request of a harness (CONTRACT "Approvals"): the tool, what the person must
 * judge (the command itself for a shell tool) and the tool's input, with Allow and Deny. Deny
 * first asks for the reason the model will read (it may stay empty). The decision goes through
 * `POST /api/v1/approvals/:id/decision`, the same route as the CLI's; the element then fires
 * `approval-decided` with the approval as the Hub answered it. A refusal (decided meanwhile by
 * someone else, expired) is shown in place and fires `approval-stale`, so the list reads again.
 */
export class SvcApprovalCard extends LitElement {
  static properties = {approval: {attribute: false}, showAgent: {type: Boolean, attribute: 'show-agent'}, denying: {state: true}, busy: {state: true}, failure: {state: true}}
  static styles = [
    shared,
    css`
      .card { border: 1px solid #e6b94a; background: #fffaf0; border-radius: 6px; padding: .6rem .75rem; margin: 0 0 .75rem; }
      .summary { display: block; white-space: pre-wrap; word-break: break-word; background: #10151b; color: #d9e1e8; padding: .4rem .55rem; border-radius: 4px; margin: .35rem 0; font: 13px/1.4 ui-monospace, monospace; }
      .head { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: baseline; }
      .actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .35rem; }
      .actions input { flex: 1 1 14rem; min-width: 0; }
      .actions button { min-height: 2.25rem; min-width: 5.5rem; }
      details pre { white-space: pre-wrap; word-break: break-word; margin: .25rem 0; font: 12px/1.35 ui-monospace, monospace; }
    `,
  ]
  declare approval: ApprovalDto
  declare showAgent: boolean
  declare denying: boolean
  declare busy: boolean
  declare failure: string

  constructor() {
    super()
    this.showAgent = false
    this.denying = false
    this.busy = false
    this.failure = ''
  }

  private async decide(decision: 'allow' | 'deny') {
    const reason = decision === 'deny' ? (this.renderRoot.querySelector<HTMLInputElement>('input[name=reason]')?.value ?? '').trim() : ''
    this.busy = true
    this.failure = ''
    try {
      const r = await api<{approval: ApprovalDto}>('POST', `/api/v1/approvals/${encodeURIComponent(this.approval.id)}/decision`, {decision, ...(reason && {reason})})
      this.dispatchEvent(new CustomEvent('approval-decided', {detail: r.approval, bubbles: true, composed: true}))
    } catch (err) {
      this.failure = err instanceof ApiError ? `${err.message} (${err.code})` : (err as Error).message
      if (err instanceof ApiError && err.status === 409) this.dispatchEvent(new CustomEvent('approval-stale', {detail: this.approval, bubbles: true, composed: true}))
    } finally {
      this.busy = false
    }
  }

  override render() {
    const a = this.approval
    if (!a) return ''
    const input = a.input === undefined || a.input === null ? '' : JSON.stringify(a.input, null, 2)
    return html`<article class="card" data-approval=${a.id} aria-label=${`Permission request: ${a.tool}`}>
      <div class="head">
        <strong>${a.tool}</strong>
        ${this.showAgent ? html`<span>by <a href="#/agents/${encodeURIComponent(a.agentId)}">${a.agentName}</a></span>` : ''}
        <span class="muted" title=${a.createdAt}>${ago(a.createdAt)}</span>
      </div>
      <code class="summary" data-role="summary">${a.summary || a.tool}</code>
      ${input && input !== JSON.stringify(a.summary) ? html`<details><summary>Input</summary><pre>${input}</pre></details>` : ''}
      ${a.state !== 'pending'
        ? html`<p class="muted" data-role="outcome">${a.state}${a.decidedBy ? html` by ${decidedByText(a)}` : ''}${a.reason ? `: ${a.reason}` : ''}</p>`
        : this.denying
          ? html`<div class="actions">
              <input name="reason" aria-label="Reason for the model" placeholder="Why not (the model reads this)" maxlength="2000" @keydown=${(e: KeyboardEvent) => e.key === 'Enter' && this.decide('deny')} />
              <button class="danger" data-action="deny-confirm" ?disabled=${this.busy} @click=${() => this.decide('deny')}>Deny</button>
              <button data-action="deny-cancel" ?disabled=${this.busy} @click=${() => (this.denying = false)}>Cancel</button>
            </div>`
          : html`<div class="actions">
              <button class="primary" data-action="allow" ?disabled=${this.busy} @click=${() => this.decide('allow')}>Allow</button>
              <button class="danger" data-action="deny" ?disabled=${this.busy} @click=${() => (this.denying = true)}>Deny…</button>
            </div>`}
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}
    </article>`
  }

  override updated(changed: Map<string, unknown>) {
    // Deny asks for the reason next: put the cursor there.
    if (changed.has('denying') && this.denying) this.renderRoot.querySelector<HTMLInputElement>('input[name=reason]')?.focus()
  }
}
customElements.define('svc-approval-card', SvcApprovalCard)
