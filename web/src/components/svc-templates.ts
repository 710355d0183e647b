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

const hex = (buf: ArrayBuffer) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('')

/** A file as POST /api/v1/templates takes it: path, base64 content and its SHA-256. */
async function templateFile(f: File): Promise<{path: string; content: string; sha256: string}> {
  const bytes = new Uint8Array(await f.arrayBuffer())
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return {path: f.name, content: btoa(binary), sha256: hex(await crypto.subtle.digest('SHA-256', bytes))}
}

/**
 * Agent templates the caller can see (hub-wide and of readable projects), and an upload of a
 * hub-wide template or a new version of one. The tab is shown to holders of
 * `admin.templates.manage` (system admins, the template_admin Hub role); the Hub checks it again.
 */
export class SvcTemplates extends LoadedView<Template[]> {
  static styles = shared
  protected readonly view = 'templates'
  protected async fetchData() {
    return (await api<{templates: Template[]}>('GET', '/api/v1/templates')).templates
  }

  private upload(e: Event) {
    e.preventDefault()
    const form = e.target as HTMLFormElement
    const name = (form.elements.namedItem('template-name') as HTMLInputElement).value.trim()
    const files = [...((form.elements.namedItem('template-files') as HTMLInputElement).files ?? [])]
    void this.act(async () => {
      if (!name || files.length === 0) throw new Error('Give the template a name and at least one file.')
      const r = await api<{created: boolean; version: {seq: number}}>('POST', '/api/v1/templates', {name, files: await Promise.all(files.map(templateFile))})
      form.reset()
      await this.load()
      return r.created ? `Uploaded hub-wide template ${name}.` : `Uploaded version ${r.version.seq} of ${name}.`
    })
  }

  override render() {
    return (
      this.pending('Loading templates…') ??
      html`<h2>Templates</h2>
        ${this.data!.length
          ? html`<table aria-label="Templates">
              <thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Version</th><th scope="col">Description</th></tr></thead>
              <tbody>
                ${this.data!.map((t) => html`<tr><td>${t.name}</td><td>${t.projectId ? html`project <code>${t.projectId}</code>` : 'hub-wide'}</td><td>${t.currentVersion ?? ''}</td><td>${t.description ?? ''}</td></tr>`)}
              </tbody>
            </table>`
          : html`<p class="muted">No templates.</p>`}
        <h3>Upload a hub-wide template</h3>
        <p class="muted">An existing name gets a new version. Files keep their names at the template's top level; use <code>svc template upload</code> for folders and project templates.</p>
        <form @submit=${(e: Event) => this.upload(e)}>
          <label for="template-name">Name</label>
          <input id="template-name" name="template-name" required maxlength="63" />
          <label for="template-files">Files</label>
          <input id="template-files" name="template-files" type="file" multiple required />
          <button type="submit" ?disabled=${this.busy}>Upload</button>
        </form>
        ${this.noteView()}`
    )
  }
}
customElements.define('svc-templates', SvcTemplates)
