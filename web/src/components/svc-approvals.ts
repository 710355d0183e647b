import {LitElement, html, css} from 'lit'
import type {ApprovalDto} from '../../../src/api/approval.js'
import {api} from '../api.js'
import {liveView} from '../live.js'
import {shared} from '../styles.js'
import './svc-approval-card.js'

/**
 * The approvals inbox (`#/approvals`): every pending permission request the signed-in user may
 * decide (`GET /api/v1/approvals?state=pending`, which the Hub filters by who may decide),
 * oldest first, with Allow and Deny in place. Kept live by the event stream: a new request
 * (`approval_requested`) and any change of a listed agent (decided elsewhere, answered at the
 * terminal, expired) read the list again. Cards stack in one column, so a phone can answer.
 */
export class SvcApprovals extends LitElement {
  static properties = {items: {state: true}, failure: {state: true}, loaded: {state: true}, decided: {state: true}}
  static styles = [shared, css`:host { max-width: 48rem; }`]
  declare items: ApprovalDto[]
  declare failure: string
  declare loaded: boolean
  /** What this page decided, newest first (the last few), so the user sees it took. */
  declare decided: ApprovalDto[]
  private stop: (() => void) | null = null
  private reloading: Promise<void> | null = null

  constructor() {
    super()
    this.items = []
    this.failure = ''
    this.loaded = false
    this.decided = []
  }

  override connectedCallback() {
    super.connectedCallback()
    this.stop = liveView(
      this,
      'approvals',
      () => this.load(),
      (e) => this.items.some((a) => a.agentId === e.id) && this.reload(),
      () => this.reload(),
    )
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  private reload() {
    this.reloading ??= this.load()
      .catch((err: Error) => void (this.failure = err.message))
      .finally(() => (this.reloading = null))
  }

  private async load() {
    const r = await api<{approvals: ApprovalDto[]}>('GET', '/api/v1/approvals?state=pending')
    this.items = r.approvals.sort((x, y) => x.createdAt.localeCompare(y.createdAt))
    this.loaded = true
  }

  private onDecided = (e: CustomEvent<ApprovalDto>) => {
    this.items = this.items.filter((a) => a.id !== e.detail.id)
    this.decided = [e.detail, ...this.decided].slice(0, 5)
  }

  override render() {
    return html`<h2>Approvals</h2>
      <p class="muted">Permission requests of agents you may answer. A decision reaches the agent at once; its terminal can still answer too.</p>
      <div @approval-decided=${this.onDecided} @approval-stale=${() => this.reload()}>
        ${!this.loaded
          ? html`<p class="muted" role="status">Loading…</p>`
          : this.items.length
            ? html`<div id="approvals-list" aria-live="polite">${this.items.map((a) => html`<svc-approval-card show-agent .approval=${a}></svc-approval-card>`)}</div>`
            : html`<p class="notice" id="approvals-empty" role="status">Nothing waits for you.</p>`}
      </div>
      ${this.decided.length
        ? html`<h3>Just decided</h3>
          <ul class="plain" id="approvals-decided">${this.decided.map((a) => html`<li>${a.agentName}: ${a.tool} <code>${a.summary}</code>: <strong>${a.state}</strong>${a.reason ? ` (${a.reason})` : ''}</li>`)}</ul>`
        : ''}
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}`
  }
}
customElements.define('svc-approvals', SvcApprovals)
