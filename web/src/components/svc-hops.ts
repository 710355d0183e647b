import {LitElement, html} from 'lit'
import type {AdoptionHopDto as Hop} from '../../../src/api/dto.js'
import {shared} from '../styles.js'

export type {Hop}

const ceiling = (c: string[] | null) => (c === null ? html`<span class="muted">none recorded</span>` : c.length ? c.join(', ') : html`<span class="muted">empty</span>`)
const who = (d: Hop['delegator']) => (d ? `${d.kind}:${d.id}` : '')

/** Rows shown at first, and added by each "Show more". */
export const HOPS_PAGE = 100

/**
 * Hops as a table: outcome, reason, delegator, role, and the ceilings before and after. A full
 * preview of a large Hub has a hop per live agent (100k and more), far beyond what a page can lay
 * out, so the table shows the first rows and grows on request; the counts above it cover all.
 */
export class SvcHops extends LitElement {
  static properties = {hops: {attribute: false}, label: {}, shown: {state: true}}
  static styles = shared
  declare hops: Hop[]
  declare label: string
  declare shown: number

  constructor() {
    super()
    this.hops = []
    this.label = 'Hops'
    this.shown = HOPS_PAGE
  }

  override willUpdate(changed: Map<string, unknown>) {
    // A new list starts again from the first rows.
    if (changed.has('hops')) this.shown = HOPS_PAGE
  }

  override render() {
    if (!this.hops.length) return html`<p class="muted">No hops.</p>`
    const rows = this.hops.length > this.shown ? this.hops.slice(0, this.shown) : this.hops
    const more = Math.min(HOPS_PAGE, this.hops.length - rows.length)
    return html`${this.table(rows)}
      ${more > 0
        ? html`<p class="row"><span class="muted" data-shown>Showing ${rows.length} of ${this.hops.length} hops.</span>
            <button @click=${() => (this.shown += HOPS_PAGE)}>Show ${more} more</button></p>`
        : ''}`
  }

  private table(hops: Hop[]) {
    return html`<table aria-label=${this.label}>
      <thead><tr><th scope="col">Agent</th><th scope="col">Project</th><th scope="col">Outcome</th><th scope="col">Reason</th><th scope="col">Delegator</th><th scope="col">Role</th><th scope="col">Ceiling before</th><th scope="col">Ceiling after</th></tr></thead>
      <tbody>
        ${hops.map(
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
