import {LitElement, html} from 'lit'
import type {AdoptionHopDto as Hop} from '../../../src/api/dto.js'
import {shared} from '../styles.js'

export type {Hop}

const ceiling = (c: string[] | null) => (c === null ? html`<span class="muted">none recorded</span>` : c.length ? c.join(', ') : html`<span class="muted">empty</span>`)
const who = (d: Hop['delegator']) => (d ? `${d.kind}:${d.id}` : '')

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
          (h) => html`<tr data-edge=${h.edgeId ?? ''}>
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
