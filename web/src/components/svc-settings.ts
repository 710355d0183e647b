import {html} from 'lit'
import {api} from '../api.js'
import {shared} from '../styles.js'
import type {LayoutField} from './svc-field.js'
import {LoadedView} from './svc-loaded-view.js'
import type {SectionMeta} from './svc-settings-section.js'
import './svc-settings-section.js'

interface ServerConfig {
  mode: string
  layer0_editable: boolean
  env_overrides: string[]
  sections: Record<string, SectionMeta>
  [key: string]: unknown
}

/**
 * The admin settings page: every Layer-1 section (in the Hub's order) with its fields, then the
 * bootstrap keys. Sections reload the whole view after a save, reset or conflict.
 */
/** Webhook deliveries, from GET /api/v1/admin/status (system admins). */
interface NotificationStatus {
  channels: number
  deliveries: Record<string, number>
  problems: Array<{id: string; url: string; event: string; agentId: string; status: string; attempts: number; lastError: string | null; updatedAt: string}>
}

export class SvcSettings extends LoadedView<{config: ServerConfig; layout: LayoutField[]; notifications: NotificationStatus | null}> {
  static properties = {canWrite: {type: Boolean}}
  static styles = shared
  declare canWrite: boolean
  protected readonly view = 'settings'

  constructor() {
    super()
    this.canWrite = false
    this.addEventListener('settings-reload', () => void this.load())
  }

  protected async fetchData() {
    // The layout never changes while the Hub runs: read once.
    const [config, layout, notifications] = await Promise.all([
      api<ServerConfig>('GET', '/api/v1/admin/server-config'),
      this.data?.layout ?? api<{fields: LayoutField[]}>('GET', '/api/v1/admin/server-config/layout').then((r) => r.fields),
      api<{notifications?: NotificationStatus}>('GET', '/api/v1/admin/status').then(
        (r) => r.notifications ?? null,
        () => null,
      ),
    ])
    return {config, layout, notifications}
  }

  /** Webhook deliveries of `notification_channels`: counts, then the latest problems. */
  private renderDeliveries(n: NotificationStatus) {
    const d = n.deliveries
    return html`<section aria-label="Notification deliveries" id="notification-deliveries">
      <p class=${n.problems.length ? 'notice error' : 'muted'}>
        Webhook deliveries (${n.channels} channel${n.channels === 1 ? '' : 's'}): ${d.delivered ?? 0} delivered, ${d.pending ?? 0} pending, ${d.failed ?? 0} failed.
      </p>
      ${n.problems.length
        ? html`<table aria-label="Failed webhook deliveries">
            <thead><tr><th scope="col">URL</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">When</th></tr></thead>
            <tbody>${n.problems.map((p) => html`<tr><td>${p.url}</td><td>${p.event}</td><td>${p.status}</td><td>${p.attempts}</td><td>${p.lastError ?? ''}</td><td>${p.updatedAt}</td></tr>`)}</tbody>
          </table>`
        : ''}
    </section>`
  }

  /** Scrolls to a section and moves the focus to its heading (keyboard users land there). */
  private jump(name: string) {
    const section = this.renderRoot.querySelector(`svc-settings-section[data-section="${name}"]`) as HTMLElement | null
    section?.scrollIntoView()
    ;(section?.shadowRoot?.querySelector('h3') as HTMLElement | null)?.focus()
  }

  override render() {
    const pending = this.pending('Loading settings…')
    if (pending) return pending
    const {config: c, layout, notifications: n} = this.data!
    return html`
      <h2>Hub settings</h2>
      <p class="muted">Operational (Layer-1) settings live in the Hub database, one section at a time; a save applies at once on every replica.</p>
      ${n ? this.renderDeliveries(n) : ''}
      <nav aria-label="Settings sections">
        <ul class="row plain">
          ${[...Object.keys(c.sections), 'bootstrap'].map((n) => html`<li><button class="link" @click=${() => this.jump(n)}>${n}</button></li>`)}
        </ul>
      </nav>
      ${Object.entries(c.sections).map(
        ([name, meta]) => html`<svc-settings-section
          data-section=${name}
          .name=${name}
          .meta=${meta}
          .fields=${layout.filter((f) => f.section === name)}
          .view=${c}
          .envOverrides=${c.env_overrides}
          ?canWrite=${this.canWrite}
        ></svc-settings-section>`,
      )}
      <svc-settings-section data-section="bootstrap" .name=${null} .fields=${layout.filter((f) => f.layer !== 1)} .view=${c} .envOverrides=${c.env_overrides} ?canWrite=${this.canWrite} ?layer0Editable=${c.layer0_editable}></svc-settings-section>
    `
  }
}
customElements.define('svc-settings', SvcSettings)
