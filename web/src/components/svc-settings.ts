import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {markReady} from '../readiness.js'
import {shared} from '../styles.js'
import type {LayoutField} from './svc-field.js'
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
export class SvcSettings extends LitElement {
  static properties = {canWrite: {type: Boolean}, config: {state: true}, layout: {state: true}, failure: {state: true}}
  static styles = shared
  declare canWrite: boolean
  declare config: ServerConfig | null
  declare layout: LayoutField[]
  declare failure: string

  constructor() {
    super()
    this.canWrite = false
    this.config = null
    this.layout = []
    this.failure = ''
  }

  override connectedCallback() {
    super.connectedCallback()
    this.addEventListener('settings-reload', () => void this.load())
    void this.load()
  }

  async load() {
    try {
      const [config, layout] = await Promise.all([api<ServerConfig>('GET', '/api/v1/admin/server-config'), this.layout.length ? {fields: this.layout} : api<{fields: LayoutField[]}>('GET', '/api/v1/admin/server-config/layout')])
      this.config = config
      this.layout = layout.fields
      this.failure = ''
      await this.updateComplete
      void markReady('settings')
    } catch (err) {
      this.failure = (err as Error).message
    }
  }

  override render() {
    if (this.failure) return html`<p class="notice error" role="alert">${this.failure}</p>`
    const c = this.config
    if (!c) return html`<p class="muted" role="status">Loading settings…</p>`
    const bootstrapFields = this.layout.filter((f) => f.layer !== 1)
    return html`
      <h2>Hub settings</h2>
      <p class="muted">Operational (Layer-1) settings live in the Hub database, one section at a time; a save applies at once on every replica.</p>
      ${Object.entries(c.sections).map(
        ([name, meta]) => html`<svc-settings-section
          data-section=${name}
          .name=${name}
          .meta=${meta}
          .fields=${this.layout.filter((f) => f.section === name)}
          .view=${c}
          .envOverrides=${c.env_overrides}
          ?canWrite=${this.canWrite}
        ></svc-settings-section>`,
      )}
      <svc-settings-section data-section="bootstrap" .name=${null} .fields=${bootstrapFields} .view=${c} .envOverrides=${c.env_overrides} ?canWrite=${this.canWrite} ?layer0Editable=${c.layer0_editable}></svc-settings-section>
    `
  }
}
customElements.define('svc-settings', SvcSettings)
