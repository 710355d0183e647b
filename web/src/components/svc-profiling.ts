import {html} from 'lit'
import {api} from '../api.js'
import {resetReadiness} from '../readiness.js'
import {shared} from '../styles.js'
import {LoadedView} from './svc-loaded-view.js'

interface Profiling {
  readiness_marks: boolean
  revision: number
}

/** `profiling.readiness_marks`: turns the client's readiness performance marks on and off. */
export class SvcProfiling extends LoadedView<Profiling> {
  static properties = {canWrite: {type: Boolean}}
  static styles = shared
  declare canWrite: boolean
  protected readonly view = 'profiling'

  constructor() {
    super()
    this.canWrite = false
  }

  protected fetchData() {
    return api<Profiling>('GET', '/api/v1/admin/profiling')
  }

  private put(value: boolean | null) {
    return this.act(async () => {
      this.data = await api<Profiling>('PUT', '/api/v1/admin/profiling', {readiness_marks: value, revision: this.data?.revision})
      resetReadiness()
      return `Readiness marks are ${this.data.readiness_marks ? 'on' : 'off'} (revision ${this.data.revision}).`
    })
  }

  override render() {
    const s = this.data
    return html`<h2>Profiling</h2>
      ${this.pending('Loading…') ??
      html`<div class="row">
          <input id="readiness" type="checkbox" .checked=${s!.readiness_marks} ?disabled=${!this.canWrite || this.busy} @change=${(e: Event) => this.put((e.target as HTMLInputElement).checked)}>
          <label for="readiness">Readiness performance marks in the web client (<code>profiling.readiness_marks</code>)</label>
        </div>
        <p class="muted">Revision ${s!.revision}. When on, each view calls performance.mark("svc:&lt;view&gt;:ready") once its data is shown.</p>
        ${this.canWrite ? html`<button ?disabled=${this.busy} @click=${() => this.put(null)}>Reset profiling to its default</button>` : ''}`}
      ${this.noteView()}`
  }
}
customElements.define('svc-profiling', SvcProfiling)
