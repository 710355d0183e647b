import {LitElement, html} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import type {ApprovalDto} from '../../../src/api/approval.js'
import {api} from '../api.js'
import {liveView} from '../live.js'
import {shared} from '../styles.js'
import './svc-approval-card.js'

/**
 * The agent page's pending permission requests (approvals.md), each with Allow and Deny, read
 * from `GET /api/v1/agents/:id/approvals?state=pending` and kept live: a new request
 * (`approval_requested`) or any change of the agent (a decision elsewhere, the terminal's answer,
 * an expiry: each moves its activity) reads them again. Nothing is shown when none is pending.
 */
export class SvcAgentApprovals extends LitElement {
  static properties = {agent: {attribute: false}, pending: {state: true}, failure: {state: true}, last: {state: true}}
  static styles = shared
  declare agent: Agent
  declare pending: ApprovalDto[]
  declare failure: string
  /** The decision just made on this page, shown until the next request. */
  declare last: ApprovalDto | null
  private stop: (() => void) | null = null
  private reloading: Promise<void> | null = null

  constructor() {
    super()
    this.pending = []
    this.failure = ''
    this.last = null
  }

  override connectedCallback() {
    super.connectedCallback()
    this.stop = liveView(
      this,
      'agent-approvals',
      () => this.load(),
      (e) => e.id === this.agent?.id && this.reload(),
      (a) => a.agentId === this.agent?.id && this.reload(),
    )
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  override willUpdate(changed: Map<string, unknown>) {
    const before = changed.get('agent') as Agent | undefined
    if (before && this.agent && before.id !== this.agent.id) {
      this.pending = []
      this.last = null
      this.reload()
    }
  }

  private reload() {
    this.reloading ??= this.load()
      .catch((err: Error) => void (this.failure = err.message))
      .finally(() => (this.reloading = null))
  }

  private async load() {
    const id = this.agent?.id
    if (!id) return
    const r = await api<{approvals: ApprovalDto[]}>('GET', `/api/v1/agents/${encodeURIComponent(id)}/approvals?state=pending`)
    if (id !== this.agent.id) return
    this.pending = r.approvals.sort((x, y) => x.createdAt.localeCompare(y.createdAt))
  }

  private decided = (e: CustomEvent<ApprovalDto>) => {
    this.last = e.detail
    this.pending = this.pending.filter((p) => p.id !== e.detail.id)
  }

  override render() {
    if (!this.pending.length && !this.last) return ''
    return html`<section aria-label="Permission requests" id="agent-approvals" @approval-decided=${this.decided} @approval-stale=${() => this.reload()}>
      ${this.pending.length ? html`<h3>Permission requests</h3>` : ''}
      ${this.pending.map((a) => html`<svc-approval-card .approval=${a}></svc-approval-card>`)}
      ${this.last ? html`<p class="notice ${this.last.state === 'allowed' ? 'ok' : ''}" role="status" id="approval-outcome">${this.last.tool} <code>${this.last.summary}</code>: ${this.last.state}${this.last.reason ? ` (${this.last.reason})` : ''}</p>` : ''}
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}
    </section>`
  }
}
customElements.define('svc-agent-approvals', SvcAgentApprovals)
