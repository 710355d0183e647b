import {html} from 'lit'
import type {ProjectDto as Project} from '../../../src/api/dto.js'
import {api} from '../api.js'
import {shared} from '../styles.js'
import {LoadedView} from './svc-loaded-view.js'

/** The projects the caller can read; each links to its agents and its artifacts. */
export class SvcProjects extends LoadedView<Project[]> {
  static styles = shared
  protected readonly view = 'projects'
  protected async fetchData() {
    return (await api<{projects: Project[]}>('GET', '/api/v1/projects')).projects
  }

  override render() {
    return (
      this.pending('Loading projects…') ??
      html`<h2>Projects</h2>
        <table aria-label="Projects">
          <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Artifacts</th><th scope="col">Your role</th><th scope="col">Git remote</th><th scope="col">Created</th></tr></thead>
          <tbody>
            ${this.data!.map(
              (p) => html`<tr data-project=${p.id}>
                <td><a href="#/agents?project=${encodeURIComponent(p.id)}" aria-label=${`Agents of ${p.name}`}>${p.name}</a></td>
                <td><code>${p.slug}</code></td>
                <td><a href="#/projects/${encodeURIComponent(p.id)}/artifacts" aria-label=${`Artifacts of ${p.name}`}>Artifacts</a></td>
                <td>${p.role ?? 'system admin'}</td>
                <td>${p.gitRemote ?? ''}</td>
                <td>${p.createdAt}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
    )
  }
}
customElements.define('svc-projects', SvcProjects)
