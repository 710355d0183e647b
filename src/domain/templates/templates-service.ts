import {createHash} from 'node:crypto'
import {AppError, notFound} from '../../api/app-error.js'
import {templatePathProblem} from '../../api/template-paths.js'
import type {ManifestEntry, Template, TemplateVersion} from '../../store/repositories/templates.js'
import type {CallContext} from '../authz/context.js'
import type {AgentAccess} from '../agents/access.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import {hasAdminPermission} from '../settings/admin-access.js'

export interface UploadInput {
  name: string
  projectId?: string | null
  description?: string
  files: Array<{path: string; content: string; sha256: string}>
}

export const MAX_TEMPLATE_BYTES = 8 * 1024 * 1024
export const MAX_TEMPLATE_FILES = 500
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/

const fieldError = (path: string, message: string, extra?: Record<string, unknown>) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}], ...extra})

/** A relative path inside the template: no absolute paths, no `..`, no empty segments, no `.git` of any case. */
export function safeTemplatePath(p: string): boolean {
  return templatePathProblem(p) === null
}

/**
 * Templates: uploaded as files with a SHA-256 manifest; uploading under an existing name adds
 * a version. Hub-wide templates (no project) are managed by holders of `admin.templates.manage`
 * (system admins and the template_admin Hub role, interactive credentials only); project templates by
 * those holding `template.create` / `template.update` in the project.
 */
export function createTemplatesService(deps: Deps, access: AgentAccess) {
  const {store, clock} = deps

  async function checkScope(ctx: CallContext, projectId: string | null, permission: 'template.create' | 'template.update' | 'template.read') {
    // A template is laid into other agents' workspaces: an agent writing one would reach beyond
    // its own workspace. Agents use templates; people make them (docs/runtimes.md, templates).
    if (permission !== 'template.read' && ctx.principal.kind === 'agent') throw new AppError('forbidden', 'agents cannot create or change templates: a template is laid into other agents\' workspaces; a person manages templates')
    if (projectId) return access.checkProject(ctx, projectId, permission)
    if (permission === 'template.read') return
    if (!hasAdminPermission(ctx, 'admin.templates.manage')) throw new AppError('forbidden', 'managing hub-wide templates needs admin.templates.manage (a system admin or the template_admin Hub role) on an interactive sign-in')
  }

  async function projectIdOf(ref: string | null | undefined): Promise<string | null> {
    if (!ref) return null
    const p = (await store.projects.get(ref)) ?? (await store.projects.getBySlug(ref))
    if (!p) throw notFound('project')
    return p.id
  }

  return {
    async upload(ctx: CallContext, input: UploadInput): Promise<{template: Template; version: TemplateVersion; created: boolean}> {
      if (!NAME.test(input.name)) throw fieldError('name', 'must be 1-63 letters, digits, ".", "_" or "-"')
      if (input.files.length === 0) throw fieldError('files', 'must hold at least one file')
      if (input.files.length > MAX_TEMPLATE_FILES) throw fieldError('files', `may hold at most ${MAX_TEMPLATE_FILES} files`)
      const projectId = await projectIdOf(input.projectId)
      const seen = new Set<string>()
      let total = 0
      const manifest: ManifestEntry[] = []
      for (const [i, f] of input.files.entries()) {
        const problem = templatePathProblem(f.path)
        if (problem) throw fieldError(`files.${i}.path`, `"${f.path}" ${problem}`)
        if (seen.has(f.path)) throw fieldError(`files.${i}.path`, `"${f.path}" appears twice`)
        seen.add(f.path)
        const bytes = Buffer.from(f.content, 'base64')
        if (bytes.toString('base64') !== f.content.replace(/\s/g, '')) throw fieldError(`files.${i}.content`, 'must be base64')
        total += bytes.length
        if (total > MAX_TEMPLATE_BYTES) throw new AppError('payload_too_large', `a template may hold at most ${MAX_TEMPLATE_BYTES} bytes`)
        const sha = createHash('sha256').update(bytes).digest('hex')
        if (sha !== f.sha256.toLowerCase()) {
          throw new AppError('sha256_mismatch', `files.${i} (${f.path}): SHA-256 ${sha} does not match the manifest's ${f.sha256}`, {path: f.path, expected: f.sha256, actual: sha})
        }
        manifest.push({path: f.path, size: bytes.length, sha256: sha})
      }
      manifest.sort((a, b) => (a.path < b.path ? -1 : 1))
      const t = iso(clock.now())
      const existing = await store.templates.getByName(projectId, input.name)
      await checkScope(ctx, projectId, existing ? 'template.update' : 'template.create')
      const files = input.files.map((f) => ({path: f.path, content: f.content}))
      return store.transaction(async (tx) => {
        let template = existing
        let created = false
        if (!template) {
          template = {id: newId(), name: input.name, projectId, description: input.description ?? '', currentVersion: 1, createdBy: ctx.principal.id, createdAt: t, updatedAt: t}
          await tx.templates.insert(template)
          created = true
        }
        const seq = created ? 1 : (await tx.templates.maxSeq(template.id)) + 1
        const version: TemplateVersion = {seq, manifest, createdBy: ctx.principal.id, createdAt: t}
        await tx.templates.insertVersion(template.id, version, files)
        await tx.templates.setCurrentVersion(template.id, seq, t)
        return {template: {...template, currentVersion: seq, updatedAt: t}, version, created}
      })
    },

    async list(ctx: CallContext, filter: {projectId?: string}): Promise<Template[]> {
      const visible = await access.visibleProjects(ctx)
      if (filter.projectId) {
        const pid = await projectIdOf(filter.projectId)
        if (visible && !visible.includes(pid!)) throw notFound('project')
        return store.templates.list([pid!])
      }
      return store.templates.list(visible ?? 'all')
    },

    async get(ctx: CallContext, id: string): Promise<{template: Template; versions: TemplateVersion[]}> {
      const template = await store.templates.get(id)
      if (!template) throw notFound('template')
      try {
        await checkScope(ctx, template.projectId, 'template.read')
      } catch (err) {
        if (err instanceof AppError && err.code === 'forbidden') throw notFound('template')
        throw err
      }
      return {template, versions: await store.templates.versions(id)}
    },

    /** Files of a version (base64), for a broker preparing an agent's workspace. */
    async files(templateId: string, seq: number): Promise<Array<{path: string; content: string}>> {
      const versions = await store.templates.versions(templateId)
      const v = versions.find((x) => x.seq === seq)
      if (!v) throw notFound('template version')
      const out: Array<{path: string; content: string}> = []
      for (const m of v.manifest) out.push({path: m.path, content: (await store.templates.file(templateId, seq, m.path)) ?? ''})
      return out
    },
  }
}

export type TemplatesService = ReturnType<typeof createTemplatesService>
