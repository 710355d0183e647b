import {html} from 'lit'
import {api} from '../api.js'
import {shared} from '../styles.js'
import type {AdoptionStatusDto as AdoptionStatus} from '../../../src/api/dto.js'
import type {SvcAdoptionPlan} from './svc-adoption-plan.js'
import {LoadedView} from './svc-loaded-view.js'
import './svc-hops.js'
import './svc-adoption-plan.js'

export const PAGE_SIZE = 20

const countsTable = (label: string, heading: string, counts: Record<string, number>) =>
  html`<table aria-label=${label} class="compact">
    <thead><tr><th scope="col">${heading}</th><th scope="col">Records</th></tr></thead>
    <tbody>${Object.entries(counts).map(([k, n]) => html`<tr><td>${k}</td><td data-count=${k}>${n}</td></tr>`)}</tbody>
  </table>`

/**
 * Delegation provenance adoption: counts by status and reason, the records (filters, paging),
 * the unrecorded hops no record covers (`notInCohort`), and the preview-then-commit flow.
 */
export class SvcAdoption extends LoadedView<AdoptionStatus> {
  static properties = {status: {state: true}, reason: {state: true}, projectId: {state: true}, offset: {state: true}}
  static styles = shared
  declare status: string
  declare reason: string
  declare projectId: string
  declare offset: number
  protected readonly view = 'adoption'

  constructor() {
    super()
    this.status = ''
    this.reason = ''
    this.projectId = ''
    this.offset = 0
    this.addEventListener('adoption-changed', () => void this.load())
  }

  protected fetchData() {
    const q = new URLSearchParams({limit: String(PAGE_SIZE), offset: String(this.offset)})
    if (this.status) q.set('status', this.status)
    if (this.reason) q.set('reason', this.reason)
    if (this.projectId.trim()) q.set('projectId', this.projectId.trim())
    return api<AdoptionStatus>('GET', `/api/v1/admin/delegation-adoption?${q}`)
  }

  private filter(field: 'status' | 'reason' | 'projectId') {
    return (e: Event) => {
      this[field] = (e.target as HTMLInputElement | HTMLSelectElement).value
      this.offset = 0
      void this.load()
    }
  }

  private page(delta: number) {
    this.offset = Math.max(0, this.offset + delta * PAGE_SIZE)
    void this.load()
  }

  private revert(id: string) {
    const plan = this.renderRoot.querySelector('svc-adoption-plan') as SvcAdoptionPlan | null
    plan?.revert([id])
    plan?.scrollIntoView()
    ;(plan?.renderRoot.querySelector('button.primary') as HTMLButtonElement | null)?.focus()
  }

  override render() {
    const pending = this.pending('Loading adoption status…')
    if (pending) return html`<h2>Delegation adoption</h2>${pending}`
    const d = this.data!
    const last = Math.min(d.offset + d.records.length, d.total)
    return html`<h2>Delegation adoption</h2>
      <p class="muted">
        ${d.snapshotTaken ? html`Boot snapshot taken${d.cohort ? ` ${d.cohort.takenAt}: ${d.cohort.recordCount} record(s) in the cohort` : ''}.` : 'The boot snapshot is not taken yet.'}
        ${d.marker ? html` Start-up migration marker written ${d.marker.writtenAt} (retry version ${d.marker.retryVersion}).` : ''}
      </p>
      <div class="row top">${countsTable('Records by status', 'Status', d.counts.byStatus)}${countsTable('Records by reason', 'Reason', d.counts.byReason)}</div>

      <h3>Records</h3>
      <div class="row">
        <label for="f-status">Filter by status</label>
        <select id="f-status" @change=${this.filter('status')}>
          <option value="">any</option>
          ${Object.keys(d.counts.byStatus).map((s) => html`<option value=${s} ?selected=${s === this.status}>${s}</option>`)}
        </select>
        <label for="f-reason">Filter by reason</label>
        <select id="f-reason" @change=${this.filter('reason')}>
          <option value="">any</option>
          ${Object.keys(d.counts.byReason).map((s) => html`<option value=${s} ?selected=${s === this.reason}>${s}</option>`)}
        </select>
        <label for="f-project">Filter by project ID</label>
        <input id="f-project" .value=${this.projectId} @change=${this.filter('projectId')}>
      </div>
      <table aria-label="Adoption records">
        <thead><tr><th scope="col">Record</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Origin</th><th scope="col">Agent</th><th scope="col">Project</th><th scope="col">Created</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
        <tbody>
          ${d.records.map(
            (r) => html`<tr data-record=${r.id}>
              <td><code>${r.id}</code></td>
              <td data-col="status">${r.status}</td>
              <td>${r.reason ?? ''}</td>
              <td>${r.origin}</td>
              <td><code>${r.delegateAgentId}</code></td>
              <td><code>${r.projectId}</code></td>
              <td>${r.createdAt}</td>
              <td>${r.status === 'adopted' && !r.revertedAt ? html`<button aria-label=${`Revert record ${r.id}`} @click=${() => this.revert(r.id)}>Revert…</button>` : ''}</td>
            </tr>`,
          )}
        </tbody>
      </table>
      <div class="row">
        <span role="status" id="page-info">${d.total ? `${d.offset + 1}–${last} of ${d.total}` : 'No records'}</span>
        <button ?disabled=${d.offset === 0} @click=${() => this.page(-1)}>Previous page</button>
        <button ?disabled=${last >= d.total} @click=${() => this.page(1)}>Next page</button>
      </div>

      <h3>Unrecorded hops outside the cohort</h3>
      <svc-hops .hops=${d.notInCohort} label="Not in cohort"></svc-hops>

      <svc-adoption-plan></svc-adoption-plan>`
  }
}
customElements.define('svc-adoption', SvcAdoption)
