import {LitElement, html} from 'lit'
import {shared} from '../styles.js'

/** A hop of an adoption plan or of `notInCohort` (CONTRACT.md "Hop"). */
export interface Hop {
  edgeId: string
  agentId: string
  projectId: string
  outcome: string
  reason: string | null
  delegator: unknown
  role: string | null
  beforeCeiling: string[] | null
  afterCeiling: string[] | null
  recordId: string | null
}

const ceiling = (c: string[] | null) => (c === null ? html`<span class="muted">none recorded</span>` : c.length ? c.join(', ') : html`<span class="muted">empty</span>`)
const who = (d: unknown) => (d === null || d === undefined ? '' : typeof d === 'string' ? d : typeof d === 'object' && d && 'kind' in d && 'id' in d ? `${(d as {kind: string}).kind}:${(d as {id: string}).id}` : JSON.stringify(d))

/** Hops as a table: outcome, reason, delegator, role, and the ceilings before and after. */
export class SvcHops extends LitElement {
  static properties = {hops: {attribute: false}, label: {}}
  static styles = shared
  declare hops: Hop[]
  declare label: string

  constructor() {
    super()
    this.hops = []
    this.label = 'Hops'
  }

  override render() {
    if (!this.hops.length) return html`<p class="muted">No hops.</p>`
    return html`<table aria-label=${this.label}>
      <thead><tr><th scope="col">Agent</th><th scope="col">Project</th><th scope="col">Outcome</th><th scope="col">Reason</th><th scope="col">Delegator</th><th scope="col">Role</th><th scope="col">Ceiling before</th><th scope="col">Ceiling after</th></tr></thead>
      <tbody>
        ${this.hops.map(
          (h) => html`<tr data-edge=${h.edgeId}>
            <td><code>${h.agentId}</code></td>
            <td><code>${h.projectId}</code></td>
            <td data-col="outcome">${h.outcome}</td>
            <td>${h.reason ?? ''}</td>
            <td>${who(h.delegator)}</td>
            <td>${h.role ?? ''}</td>
            <td data-col="before">${ceiling(h.beforeCeiling)}</td>
            <td data-col="after">${ceiling(h.afterCeiling)}</td>
          </tr>`,
        )}
      </tbody>
    </table>`
  }
}
customElements.define('svc-hops', SvcHops)
