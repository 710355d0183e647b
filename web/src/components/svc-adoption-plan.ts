import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {shared} from '../styles.js'
import type {AdoptionCommitDto as Commit, AdoptionPreviewDto as Preview} from '../../../src/api/dto.js'
import './svc-hops.js'

const list = (s: string) => s.split(/[\s,]+/).filter(Boolean)

/**
 * Preview, then commit: adopt (a project and agents, or everything) or revert (record IDs). The
 * preview shows every hop with its ceilings before anything is written; Commit sends the plan's
 * fingerprint, and the Hub refuses (409) when the plan changed since.
 */
export class SvcAdoptionPlan extends LitElement {
  static properties = {
    operation: {state: true},
    projectId: {state: true},
    agentIds: {state: true},
    recordIds: {state: true},
    preview: {state: true},
    committed: {state: true},
    note: {state: true},
    busy: {state: true},
  }
  static styles = shared
  declare operation: 'adopt' | 'revert'
  declare projectId: string
  declare agentIds: string
  declare recordIds: string
  declare preview: Preview | null
  declare committed: Commit | null
  declare note: string
  declare busy: boolean

  constructor() {
    super()
    this.operation = 'adopt'
    this.projectId = ''
    this.agentIds = ''
    this.recordIds = ''
    this.preview = null
    this.committed = null
    this.note = ''
    this.busy = false
  }

  /** Prefills a revert of records (the Revert buttons of the records table). */
  revert(recordIds: string[]) {
    this.operation = 'revert'
    this.recordIds = recordIds.join(' ')
    this.preview = null
    this.committed = null
  }

  private body() {
    if (this.operation === 'revert') return {operation: 'revert', recordIds: list(this.recordIds)}
    const scope = {...(this.projectId.trim() && {projectId: this.projectId.trim()}), ...(list(this.agentIds).length && {agentIds: list(this.agentIds)})}
    return {operation: 'adopt', scope}
  }

  private async run(fn: () => Promise<void>) {
    this.busy = true
    this.note = ''
    try {
      await fn()
    } catch (err) {
      this.note = (err as Error).message
    } finally {
      this.busy = false
    }
  }

  private doPreview = () =>
    this.run(async () => {
      this.committed = null
      this.preview = await api<Preview>('POST', '/api/v1/admin/delegation-adoption/previews', this.body())
    })

  private doCommit = () =>
    this.run(async () => {
      const p = this.preview!
      this.committed = await api<Commit>('POST', '/api/v1/admin/delegation-adoption/commits', {...this.body(), planFingerprint: p.planFingerprint, planId: p.planId})
      this.preview = null
      this.dispatchEvent(new CustomEvent('adoption-changed', {bubbles: true, composed: true}))
    })

  private edit(field: 'projectId' | 'agentIds' | 'recordIds') {
    return (e: Event) => {
      this[field] = (e.target as HTMLInputElement).value
      this.preview = null
    }
  }

  override render() {
    const p = this.preview
    return html`<section aria-labelledby="plan-h">
      <h3 id="plan-h">Adopt or revert</h3>
      <div class="row">
        <label for="operation">Operation</label>
        <select id="operation" .value=${this.operation} @change=${(e: Event) => ((this.operation = (e.target as HTMLSelectElement).value as 'adopt' | 'revert'), (this.preview = null))}>
          <option value="adopt">Adopt</option>
          <option value="revert">Revert</option>
        </select>
        ${this.operation === 'adopt'
          ? html`<label for="project">Project ID</label><input id="project" .value=${this.projectId} @input=${this.edit('projectId')} placeholder="every project">
              <label for="agents">Agent IDs</label><input id="agents" .value=${this.agentIds} @input=${this.edit('agentIds')} placeholder="every live agent">`
          : html`<label for="records">Record IDs</label><input id="records" class="wide" .value=${this.recordIds} @input=${this.edit('recordIds')}>`}
        <button class="primary" ?disabled=${this.busy} @click=${this.doPreview}>Preview</button>
      </div>
      ${this.note ? html`<p class="notice error" role="alert">${this.note}</p>` : ''}
      ${p
        ? html`<div id="preview">
            <p role="status">Preview of ${p.operation}: ${Object.entries(p.counts).map(([k, n]) => `${n} ${k}`).join(', ') || 'nothing'}${p.coveredRecordIds.length ? `; covers ${p.coveredRecordIds.length} record(s)` : ''}. Nothing is written until you commit.</p>
            <svc-hops .hops=${p.hops} label="Planned hops"></svc-hops>
            <div class="row">
              <button class="primary" ?disabled=${this.busy} @click=${this.doCommit}>Commit ${p.operation}</button>
              <button @click=${() => (this.preview = null)}>Discard preview</button>
            </div>
          </div>`
        : ''}
      ${this.committed ? html`<p class="notice ok" role="status" id="committed">Committed: ${this.committed.hops} edge(s) written, ${this.committed.coveredRecords} record(s) covered.</p>` : ''}
    </section>`
  }
}
customElements.define('svc-adoption-plan', SvcAdoptionPlan)
