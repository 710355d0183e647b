import type {Kysely, Selectable} from 'kysely'
import {translateDbError} from '../db-errors.js'
import type {ArtifactFilesTable, ArtifactsTable, ArtifactVersionsTable, Database} from '../schema.js'

export type OwnerKind = 'user' | 'agent'

export interface ArtifactRow {
  id: string
  title: string
  ownerKind: OwnerKind
  ownerId: string
  projectId: string
  currentVersion: number
  createdAt: string
  updatedAt: string
}

export interface ArtifactFileRow {
  path: string
  size: number
  sha256: string
  mediaType: string
  blobKey: string
}

export interface ArtifactVersionRow {
  artifactId: string
  seq: number
  entryPath: string
  createdByKind: string
  createdById: string
  createdAt: string
  files: ArtifactFileRow[]
}

export interface GrantRow {
  granteeKind: 'user' | 'project'
  granteeId: string
  grantedBy: string
  createdAt: string
}

const toArtifact = (r: Selectable<ArtifactsTable>): ArtifactRow => ({
  id: r.id,
  title: r.title,
  ownerKind: r.owner_kind as OwnerKind,
  ownerId: r.owner_id,
  projectId: r.project_id,
  currentVersion: Number(r.current_version),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

const toFile = (r: Selectable<ArtifactFilesTable>): ArtifactFileRow => ({path: r.path, size: Number(r.size), sha256: r.sha256, mediaType: r.media_type, blobKey: r.blob_key})

const toVersion = (v: Selectable<ArtifactVersionsTable>, files: Selectable<ArtifactFilesTable>[]): ArtifactVersionRow => ({
  artifactId: v.artifact_id,
  seq: Number(v.seq),
  entryPath: v.entry_path,
  createdByKind: v.created_by_kind,
  createdById: v.created_by_id,
  createdAt: v.created_at,
  files: files.map(toFile),
})

export const artifactsRepo = (db: Kysely<Database>) => ({
  async get(id: string): Promise<ArtifactRow | null> {
    const r = await db.selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toArtifact(r) : null
  },

  /** A version with its files; null when absent. */
  async version(artifactId: string, seq: number): Promise<ArtifactVersionRow | null> {
    const v = await db.selectFrom('artifact_versions').selectAll().where('artifact_id', '=', artifactId).where('seq', '=', seq).executeTakeFirst()
    if (!v) return null
    const files = await db.selectFrom('artifact_files').selectAll().where('artifact_id', '=', artifactId).where('seq', '=', seq).orderBy('path').execute()
    return toVersion(v, files)
  },

  /** The artifacts homed in a project, most recently changed first. */
  async listByProject(projectId: string): Promise<ArtifactRow[]> {
    const rows = await db.selectFrom('artifacts').selectAll().where('project_id', '=', projectId).orderBy('updated_at', 'desc').orderBy('id').execute()
    return rows.map(toArtifact)
  },

  /** Every version of an artifact with its files, newest first. */
  async versions(artifactId: string): Promise<ArtifactVersionRow[]> {
    const vs = await db.selectFrom('artifact_versions').selectAll().where('artifact_id', '=', artifactId).orderBy('seq', 'desc').execute()
    const files = await db.selectFrom('artifact_files').selectAll().where('artifact_id', '=', artifactId).orderBy('path').execute()
    return vs.map((v) => toVersion(v, files.filter((f) => Number(f.seq) === Number(v.seq))))
  },

  /** Which of `keys` some artifact file row references (for the start-up orphan sweep). */
  async referencedBlobKeys(keys: string[]): Promise<Set<string>> {
    const found = new Set<string>()
    for (let i = 0; i < keys.length; i += 500) {
      const rows = await db.selectFrom('artifact_files').select('blob_key').where('blob_key', 'in', keys.slice(i, i + 500)).execute()
      for (const r of rows) found.add(r.blob_key)
    }
    return found
  },

  /** Every blob key of an artifact (for deleting its bytes). */
  async blobKeys(artifactId: string): Promise<string[]> {
    const rows = await db.selectFrom('artifact_files').select('blob_key').where('artifact_id', '=', artifactId).execute()
    return rows.map((r) => r.blob_key)
  },

  /** How many artifacts are homed in a project. */
  async countByProject(projectId: string): Promise<number> {
    const r = await db.selectFrom('artifacts').select((eb) => eb.fn.countAll().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow()
    return Number(r.n)
  },

  async insert(a: ArtifactRow): Promise<void> {
    try {
      await db
        .insertInto('artifacts')
        .values({id: a.id, title: a.title, owner_kind: a.ownerKind, owner_id: a.ownerId, project_id: a.projectId, current_version: a.currentVersion, created_at: a.createdAt, updated_at: a.updatedAt})
        .execute()
    } catch (err) {
      translateDbError(err, 'artifact')
    }
  },

  /** Inserts a version and its files. A version number already taken is a `conflict`. */
  async insertVersion(v: ArtifactVersionRow): Promise<void> {
    try {
      await db
        .insertInto('artifact_versions')
        .values({artifact_id: v.artifactId, seq: v.seq, entry_path: v.entryPath, created_by_kind: v.createdByKind, created_by_id: v.createdById, created_at: v.createdAt})
        .execute()
      await db
        .insertInto('artifact_files')
        .values(v.files.map((f) => ({artifact_id: v.artifactId, seq: v.seq, path: f.path, size: f.size, sha256: f.sha256, media_type: f.mediaType, blob_key: f.blobKey})))
        .execute()
    } catch (err) {
      translateDbError(err, 'artifact version')
    }
  },

  /**
   * Moves the current version from `from` to `to`; false when another writer moved it first
   * (optimistic: the caller retries with the new number).
   */
  async advance(id: string, from: number, to: number, now: string): Promise<boolean> {
    const r = await db.updateTable('artifacts').set({current_version: to, updated_at: now}).where('id', '=', id).where('current_version', '=', from).executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  },

  async delete(id: string): Promise<boolean> {
    await db.deleteFrom('artifact_files').where('artifact_id', '=', id).execute()
    const r = await db.deleteFrom('artifacts').where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  },

  async grants(artifactId: string): Promise<GrantRow[]> {
    const rows = await db.selectFrom('artifact_grants').selectAll().where('artifact_id', '=', artifactId).orderBy('created_at').orderBy('grantee_id').execute()
    return rows.map((r) => ({granteeKind: r.grantee_kind as 'user' | 'project', granteeId: r.grantee_id, grantedBy: r.granted_by, createdAt: r.created_at}))
  },

  /** Adds a grant; adding one that exists changes nothing. */
  async grant(artifactId: string, g: GrantRow): Promise<void> {
    try {
      await db
        .insertInto('artifact_grants')
        .values({artifact_id: artifactId, grantee_kind: g.granteeKind, grantee_id: g.granteeId, granted_by: g.grantedBy, created_at: g.createdAt})
        .onConflict((oc) => oc.columns(['artifact_id', 'grantee_kind', 'grantee_id']).doNothing())
        .execute()
    } catch (err) {
      translateDbError(err, 'grant')
    }
  },

  async revoke(artifactId: string, granteeKind: string, granteeId: string): Promise<boolean> {
    const r = await db.deleteFrom('artifact_grants').where('artifact_id', '=', artifactId).where('grantee_kind', '=', granteeKind).where('grantee_id', '=', granteeId).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  },
})

export type ArtifactsRepo = ReturnType<typeof artifactsRepo>
