import {html} from 'lit'
import type {ArtifactListItem} from '../../../src/api/dto.js'
import {api} from '../api.js'
import {projectOrNull, type Project} from '../projects.js'
import {shared} from '../styles.js'
import {notFoundView} from './not-found.js'
import {LoadedView} from './svc-loaded-view.js'

type Version = ArtifactListItem['versions'][number]

/** The file URL of one version: `?stream=1` so the Hub serves the bytes (no storage redirect). */
const fileUrl = (id: string, seq: number, path: string) =>
  `/api/v1/artifacts/${encodeURIComponent(id)}/versions/${seq}/files/${path.split('/').map(encodeURIComponent).join('/')}?stream=1`

const sizeText = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`)

/**
 * A project's artifacts (`GET /api/v1/projects/:id/artifacts`): each with its page, and its
 * version history newest first, every file of every version a download link. An unknown
 * project is the "not found" view.
 */
export class SvcArtifacts extends LoadedView<{project: Project | null; artifacts: ArtifactListItem[]}> {
  static properties = {...LoadedView.properties, projectId: {}}
  static styles = shared
  declare projectId: string
  protected readonly view = 'artifacts'

  constructor() {
    super()
    this.projectId = ''
  }

  protected async fetchData() {
    const project = await projectOrNull(this.projectId)
    if (!project) return {project, artifacts: []}
    const {artifacts} = await api<{artifacts: ArtifactListItem[]}>('GET', `/api/v1/projects/${encodeURIComponent(project.id)}/artifacts`)
    return {project, artifacts}
  }

  private versionRow(a: ArtifactListItem, v: Version) {
    const current = v.seq === a.artifact.currentVersion
    return html`<li data-version=${v.seq}>
      <strong>Version ${v.seq}</strong>${current ? html` <span class="muted">(current)</span>` : ''} <span class="muted">${v.createdAt}</span>
      ${v.manifest.map(
        (f) => html`<a href=${fileUrl(a.artifact.id, v.seq, f.path)} download=${f.path} data-file=${f.path} aria-label=${`Download ${f.path}, version ${v.seq} of ${a.artifact.title}`}>Download ${f.path}</a>
          <span class="muted">(${sizeText(f.size)})</span>`,
      )}
    </li>`
  }

  override render() {
    const pending = this.pending('Loading artifacts…')
    if (pending) return pending
    const {project, artifacts} = this.data!
    if (!project) return notFoundView(`There is no project "${this.projectId}" that you can see.`)
    const page = (a: ArtifactListItem) => `/projects/${encodeURIComponent(project.id)}/artifacts/${encodeURIComponent(a.artifact.id)}`
    return html`<p><a href="#/agents?project=${encodeURIComponent(project.id)}">← Agents of ${project.name}</a></p>
      <h2>Artifacts of project <span id="project-name">${project.name}</span></h2>
      ${!artifacts.length
        ? html`<p class="muted">No artifacts in this project yet (<code>svc artifact publish</code> adds one).</p>`
        : html`<table aria-label="Artifacts">
            <thead><tr><th scope="col">Title</th><th scope="col">Versions</th><th scope="col">Owner</th></tr></thead>
            <tbody>
              ${artifacts.map(
                (a) => html`<tr data-artifact=${a.artifact.id}>
                  <td><a href=${page(a)}>${a.artifact.title}</a><br /><code>${a.artifact.ref}</code></td>
                  <td><ul class="plain" aria-label=${`Versions of ${a.artifact.title}`}>${a.versions.map((v) => this.versionRow(a, v))}</ul></td>
                  <td>${a.artifact.owner.kind} <code>${a.artifact.owner.id}</code></td>
                </tr>`,
              )}
            </tbody>
          </table>`}`
  }
}
customElements.define('svc-artifacts', SvcArtifacts)
