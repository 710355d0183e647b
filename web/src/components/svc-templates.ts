import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {markReady} from '../readiness.js'
import {shared} from '../styles.js'

interface Template {
  id: string
  name: string
  projectId: string | null
  description?: string | null
  currentVersion?: number
  updatedAt?: string
}

/** Agent templates the caller can see (hub-wide and of readable projects). */
export class SvcTemplates extends LitElement {
  static properties = {templates: {state: true}, failure: {state: true}}
  static styles = shared
  declare templates: Template[] | null
  declare failure: string

  constructor() {
    super()
    this.templates = null
    this.failure = ''
  }

  override async connectedCallback() {
    super.connectedCallback()
    try {
      this.templates = (await api<{templates: Template[]}>('GET', '/api/v1/templates')).templates
      await this.updateComplete
      void markReady('templates')
    } catch (err) {
      this.failure = (err as Error).message
    }
  }

  override render() {
    if (this.failure) return html`<p class="notice error" role="alert">${this.failure}</p>`
    if (!this.templates) return html`<p class="muted" role="status">Loading templates…</p>`
    return html`<h2>Templates</h2>
      <p class="muted">Upload templates with <code>svc template upload</code>.</p>
      ${this.templates.length
        ? html`<table aria-label="Templates">
            <thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Version</th><th scope="col">Description</th></tr></thead>
            <tbody>
              ${this.templates.map((t) => html`<tr><td>${t.name}</td><td>${t.projectId ? html`project <code>${t.projectId}</code>` : 'hub-wide'}</td><td>${t.currentVersion ?? ''}</td><td>${t.description ?? ''}</td></tr>`)}
            </tbody>
          </table>`
        : html`<p class="muted">No templates.</p>`}`
  }
}
customElements.define('svc-templates', SvcTemplates)
