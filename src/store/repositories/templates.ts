import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'

export interface ManifestEntry {
  path: string
  size: number
  sha256: string
}

export interface Template {
  id: string
  name: string
  /** Project ID, or null for a hub-wide template. */
  projectId: string | null
  description: string
  currentVersion: number
  createdBy: string
  createdAt: string
  updatedAt: string
}

export interface TemplateVersion {
  seq: number
  manifest: ManifestEntry[]
  createdBy: string
  createdAt: string
}

const toTemplate = (r: {id: string; name: string; scope: string; description: string; current_version: number; created_by: string; created_at: string; updated_at: string}): Template => ({
  id: r.id,
  name: r.name,
  projectId: r.scope || null,
  description: r.description,
  currentVersion: Number(r.current_version),
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

export const templatesRepo = (db: Kysely<Database>) => ({
  async get(id: string): Promise<Template | null> {
    const r = await db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toTemplate(r) : null
  },
  async getByName(projectId: string | null, name: string): Promise<Template | null> {
    const r = await db.selectFrom('templates').selectAll().where('scope', '=', projectId ?? '').where('name', '=', name).executeTakeFirst()
    return r ? toTemplate(r) : null
  },
  /** Hub-wide templates plus those of the given projects. */
  async list(projectIds: string[] | 'all'): Promise<Template[]> {
    let q = db.selectFrom('templates').selectAll()
    if (projectIds !== 'all') q = q.where('scope', 'in', ['', ...projectIds])
    const rows = await q.orderBy('name').orderBy('scope').execute()
    return rows.map(toTemplate)
  },
  async insert(t: Template): Promise<void> {
    await db
      .insertInto('templates')
      .values({id: t.id, name: t.name, scope: t.projectId ?? '', description: t.description, current_version: t.currentVersion, created_by: t.createdBy, created_at: t.createdAt, updated_at: t.updatedAt})
      .execute()
  },
  async setCurrentVersion(id: string, seq: number, now: string): Promise<void> {
    await db.updateTable('templates').set({current_version: seq, updated_at: now}).where('id', '=', id).execute()
  },
  async insertVersion(templateId: string, v: TemplateVersion, files: Array<{path: string; content: string}>): Promise<void> {
    await db.insertInto('template_versions').values({template_id: templateId, seq: v.seq, manifest: JSON.stringify(v.manifest), created_by: v.createdBy, created_at: v.createdAt}).execute()
    if (files.length) await db.insertInto('template_files').values(files.map((f) => ({template_id: templateId, seq: v.seq, path: f.path, content: f.content}))).execute()
  },
  async versions(templateId: string): Promise<TemplateVersion[]> {
    const rows = await db.selectFrom('template_versions').selectAll().where('template_id', '=', templateId).orderBy('seq').execute()
    return rows.map((r) => ({seq: Number(r.seq), manifest: JSON.parse(r.manifest), createdBy: r.created_by, createdAt: r.created_at}))
  },
  async maxSeq(templateId: string): Promise<number> {
    const r = await db.selectFrom('template_versions').select((eb) => eb.fn.max('seq').as('m')).where('template_id', '=', templateId).executeTakeFirst()
    return Number(r?.m ?? 0)
  },
  async file(templateId: string, seq: number, path: string): Promise<string | null> {
    const r = await db.selectFrom('template_files').select('content').where('template_id', '=', templateId).where('seq', '=', seq).where('path', '=', path).executeTakeFirst()
    return r?.content ?? null
  },
})

export type TemplatesRepo = ReturnType<typeof templatesRepo>
