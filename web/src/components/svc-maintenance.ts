import {html} from 'lit'
import {api} from '../api.js'
import {shared} from '../styles.js'
import {LoadedView} from './svc-loaded-view.js'

interface Maintenance {
  enabled: boolean
  message: string
  break_glass: boolean
  updated_by: string | null
  updated_at: string | null
}

/** Maintenance mode: on, off and its message. The shell's banner follows (svc-status-changed). */
export class SvcMaintenance extends LoadedView<Maintenance> {
  static properties = {canWrite: {type: Boolean}, message: {state: true}}
  static styles = shared
  declare canWrite: boolean
  declare message: string
  protected readonly view = 'maintenance'

  constructor() {
    super()
    this.canWrite = false
    this.message = ''
  }

  protected async fetchData() {
    const m = await api<Maintenance>('GET', '/api/v1/admin/maintenance')
    this.message = m.message
    return m
  }

  private put(enabled: boolean) {
    return this.act(async () => {
      this.data = await api<Maintenance>('PUT', '/api/v1/admin/maintenance', {enabled, message: this.message})
      this.dispatchEvent(new CustomEvent('svc-status-changed', {bubbles: true, composed: true}))
      return `Maintenance mode is ${this.data.enabled ? 'on' : 'off'}.`
    })
  }

  override render() {
    const s = this.data
    return html`<h2>Maintenance</h2>
      <p class="muted">While maintenance is on, the Hub refuses changes from anyone but system admins (503 system_maintenance); reading, sign-in and admin routes keep working.</p>
      ${this.pending('Loading…') ??
      html`
        <p id="maintenance-state" role="status">Maintenance is <strong>${s!.enabled ? 'on' : 'off'}</strong>${s!.updated_at ? html` <span class="muted">(changed ${s!.updated_at} by ${s!.updated_by})</span>` : ''}.</p>
        ${s!.break_glass ? html`<p class="notice">This Hub was started in admin mode (break glass): it stays in maintenance for this run whatever is saved here.</p>` : ''}
        <label for="maintenance-message">Message shown to refused callers</label>
        <textarea id="maintenance-message" rows="2" ?readonly=${!this.canWrite} .value=${this.message} @input=${(e: Event) => (this.message = (e.target as HTMLTextAreaElement).value)}></textarea>
        <div class="row spaced">
          ${this.canWrite ? html`<button class="primary" ?disabled=${this.busy} @click=${() => this.put(!s!.enabled)}>Turn maintenance ${s!.enabled ? 'off' : 'on'}</button>` : ''}
        </div>
      `}
      ${this.noteView()}`
  }
}
customElements.define('svc-maintenance', SvcMaintenance)
