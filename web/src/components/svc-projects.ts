import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {markReady} from '../readiness.js'
import {shared} from '../styles.js'

interface Project {
  id: string
  name: string
  slug: string
  role: string | null
  gitRemote: string | null
  createdAt: string
}

/** The projects the caller can read; each links to its agents. */
export class SvcProjects extends LitElement {
  static properties = {projects: {state: true}, failure: {state: true}}
  static styles = shared
  declare projects: Project[] | null
  declare failure: string

  constructor() {
    super()
    this.projects = null
    this.failure = ''
  }

  override async connectedCallback() {
    super.connectedCallback()
    try {
      this.projects = (await api<{projects: Project[]}>('GET', '/api/v1/projects')).projects
      await this.updateComplete
      void markReady('projects')
    } catch (err) {
      this.failure = (err as Error).message
    }
  }

  override render() {
    if (this.failure) return html`<p class="notice error" role="alert">${this.failure}</p>`
    if (!this.projects) return html`<p class="muted" role="status">Loading projects…</p>`
    return html`<h2>Projects</h2>
      <table aria-label="Projects">
        <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Your role</th><th scope="col">Git remote</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${this.projects.map(
            (p) => html`<tr data-project=${p.id}>
              <td><a href="#/agents?project=${encodeURIComponent(p.id)}" aria-label=${`Agents of ${p.name}`}>${p.name}</a></td>
              <td><code>${p.slug}</code></td>
              <td>${p.role ?? 'system admin'}</td>
              <td>${p.gitRemote ?? ''}</td>
              <td>${p.createdAt}</td>
            </tr>`,
          )}
        </tbody>
      </table>`
  }
}
customElements.define('svc-projects', SvcProjects)
