import {html} from 'lit'
import {api} from '../api.js'
import {shared} from '../styles.js'
import {LoadedView} from './svc-loaded-view.js'

interface Template {
  id: string
  name: string
  projectId: string | null
  description?: string | null
  currentVersion?: number
}

/** Agent templates the caller can see (hub-wide and of readable projects). */
export class SvcTemplates extends LoadedView<Template[]> {
  static styles = shared
  protected readonly view = 'templates'
  protected async fetchData() {
    return (await api<{templates: Template[]}>('GET', '/api/v1/templates')).templates
  }

  override render() {
    return (
      this.pending('Loading templates…') ??
      html`<h2>Templates</h2>
        <p class="muted">Upload templates with <code>svc template upload</code>.</p>
        ${this.data!.length
          ? html`<table aria-label="Templates">
              <thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Version</th><th scope="col">Description</th></tr></thead>
              <tbody>
                ${this.data!.map((t) => html`<tr><td>${t.name}</td><td>${t.projectId ? html`project <code>${t.projectId}</code>` : 'hub-wide'}</td><td>${t.currentVersion ?? ''}</td><td>${t.description ?? ''}</td></tr>`)}
              </tbody>
            </table>`
          : html`<p class="muted">No templates.</p>`}`
    )
  }
}
customElements.define('svc-templates', SvcTemplates)
