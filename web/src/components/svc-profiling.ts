import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {markReady, resetReadiness} from '../readiness.js'
import {shared} from '../styles.js'

interface Profiling {
  readiness_marks: boolean
  revision: number
}

/** `profiling.readiness_marks`: turns the client's readiness performance marks on and off. */
export class SvcProfiling extends LitElement {
  static properties = {canWrite: {type: Boolean}, state: {state: true}, note: {state: true}, busy: {state: true}}
  static styles = shared
  declare canWrite: boolean
  declare state: Profiling | null
  declare note: {kind: 'ok' | 'error'; text: string} | null
  declare busy: boolean

  constructor() {
    super()
    this.canWrite = false
    this.state = null
    this.note = null
    this.busy = false
  }

  override async connectedCallback() {
    super.connectedCallback()
    try {
      this.state = await api<Profiling>('GET', '/api/v1/admin/profiling')
      await this.updateComplete
      void markReady('profiling')
    } catch (err) {
      this.note = {kind: 'error', text: (err as Error).message}
    }
  }

  private async put(value: boolean | null) {
    this.busy = true
    try {
      this.state = await api<Profiling>('PUT', '/api/v1/admin/profiling', {readiness_marks: value, revision: this.state?.revision})
      resetReadiness()
      this.note = {kind: 'ok', text: `Readiness marks are ${this.state.readiness_marks ? 'on' : 'off'} (revision ${this.state.revision}).`}
    } catch (err) {
      this.note = {kind: 'error', text: (err as Error).message}
    } finally {
      this.busy = false
    }
  }

  override render() {
    const s = this.state
    return html`<h2>Profiling</h2>
      ${s
        ? html`<div class="row">
              <input id="readiness" type="checkbox" .checked=${s.readiness_marks} ?disabled=${!this.canWrite || this.busy} @change=${(e: Event) => this.put((e.target as HTMLInputElement).checked)}>
              <label for="readiness">Readiness performance marks in the web client (<code>profiling.readiness_marks</code>)</label>
            </div>
            <p class="muted">Revision ${s.revision}. When on, each view calls performance.mark("svc:&lt;view&gt;:ready") once its data is shown.</p>
            ${this.canWrite ? html`<button ?disabled=${this.busy} @click=${() => this.put(null)}>Reset profiling to its default</button>` : ''}`
        : ''}
      ${this.note ? html`<p class="notice ${this.note.kind}" role=${this.note.kind === 'error' ? 'alert' : 'status'}>${this.note.text}</p>` : ''}`
  }
}
customElements.define('svc-profiling', SvcProfiling)
