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
export class SvcSettings extends LoadedView<{config: ServerConfig; layout: LayoutField[]}> {
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
    const [config, layout] = await Promise.all([
      api<ServerConfig>('GET', '/api/v1/admin/server-config'),
      this.data?.layout ?? api<{fields: LayoutField[]}>('GET', '/api/v1/admin/server-config/layout').then((r) => r.fields),
    ])
    return {config, layout}
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
    const {config: c, layout} = this.data!
    return html`
      <h2>Hub settings</h2>
      <p class="muted">Operational (Layer-1) settings live in the Hub database, one section at a time; a save applies at once on every replica.</p>
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
