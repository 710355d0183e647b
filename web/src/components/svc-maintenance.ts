import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {markReady} from '../readiness.js'
import {shared} from '../styles.js'

interface Maintenance {
  enabled: boolean
  message: string
  break_glass: boolean
  updated_by: string | null
  updated_at: string | null
}

/** Maintenance mode: on, off and its message. The shell's banner follows (svc-status-changed). */
export class SvcMaintenance extends LitElement {
  static properties = {canWrite: {type: Boolean}, state: {state: true}, message: {state: true}, note: {state: true}, busy: {state: true}}
  static styles = shared
  declare canWrite: boolean
  declare state: Maintenance | null
  declare message: string
  declare note: {kind: 'ok' | 'error'; text: string} | null
  declare busy: boolean

  constructor() {
    super()
    this.canWrite = false
    this.state = null
    this.message = ''
    this.note = null
    this.busy = false
  }

  override async connectedCallback() {
    super.connectedCallback()
    try {
      this.state = await api<Maintenance>('GET', '/api/v1/admin/maintenance')
      this.message = this.state.message
      await this.updateComplete
      void markReady('maintenance')
    } catch (err) {
      this.note = {kind: 'error', text: (err as Error).message}
    }
  }

  private async put(enabled: boolean) {
    this.busy = true
    try {
      this.state = await api<Maintenance>('PUT', '/api/v1/admin/maintenance', {enabled, message: this.message})
      this.note = {kind: 'ok', text: `Maintenance mode is ${this.state.enabled ? 'on' : 'off'}.`}
      this.dispatchEvent(new CustomEvent('svc-status-changed', {bubbles: true, composed: true}))
    } catch (err) {
      this.note = {kind: 'error', text: (err as Error).message}
    } finally {
      this.busy = false
    }
  }

  override render() {
    const s = this.state
    return html`<h2>Maintenance</h2>
      <p class="muted">While maintenance is on, the Hub refuses changes from anyone but system admins (503 system_maintenance); reading, sign-in and admin routes keep working.</p>
      ${s
        ? html`
            <p id="maintenance-state" role="status">Maintenance is <strong>${s.enabled ? 'on' : 'off'}</strong>${s.updated_at ? html` <span class="muted">(changed ${s.updated_at} by ${s.updated_by})</span>` : ''}.</p>
            ${s.break_glass ? html`<p class="notice">This Hub was started in admin mode (break glass): it stays in maintenance for this run whatever is saved here.</p>` : ''}
            <label for="maintenance-message">Message shown to refused callers</label>
            <textarea id="maintenance-message" rows="2" ?readonly=${!this.canWrite} .value=${this.message} @input=${(e: Event) => (this.message = (e.target as HTMLTextAreaElement).value)}></textarea>
            <div class="row spaced">
              ${this.canWrite
                ? s.enabled
                  ? html`<button class="primary" ?disabled=${this.busy} @click=${() => this.put(false)}>Turn maintenance off</button>`
                  : html`<button class="primary" ?disabled=${this.busy} @click=${() => this.put(true)}>Turn maintenance on</button>`
                : ''}
            </div>
          `
        : ''}
      ${this.note ? html`<p class="notice ${this.note.kind}" role=${this.note.kind === 'error' ? 'alert' : 'status'}>${this.note.text}</p>` : ''}`
  }
}
customElements.define('svc-maintenance', SvcMaintenance)
