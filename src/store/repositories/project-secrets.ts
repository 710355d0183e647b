import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'

export type SecretScope = 'project' | 'user'

export interface SecretRow {
  projectId: string
  scope: SecretScope
  /** '' for project scope. */
  userId: string
  key: string
  valueEnc: string
  writtenBy: {kind: string; id: string}
  updatedAt: string
}

const toRow = (r: Database['project_secrets']): SecretRow => ({
  projectId: r.project_id,
  scope: r.scope as SecretScope,
  userId: r.user_id,
  key: r.key,
  valueEnc: r.value_enc,
  writtenBy: {kind: r.written_by_kind, id: r.written_by_id},
  updatedAt: r.updated_at,
})

export const projectSecretsRepo = (db: Kysely<Database>) => ({
  /** Project-scope secrets and, when `userId` is given, that user's secrets of the project. */
  async list(projectId: string, userId: string | null): Promise<SecretRow[]> {
    const rows = await db
      .selectFrom('project_secrets')
      .selectAll()
      .where('project_id', '=', projectId)
      .where((eb) => eb.or([eb('scope', '=', 'project'), ...(userId ? [eb.and([eb('scope', '=', 'user'), eb('user_id', '=', userId)])] : [])]))
      .orderBy('key')
      .orderBy('scope')
      .execute()
    return rows.map(toRow)
  },
  async put(row: SecretRow): Promise<void> {
    await db
      .insertInto('project_secrets')
      .values({project_id: row.projectId, scope: row.scope, user_id: row.userId, key: row.key, value_enc: row.valueEnc, written_by_kind: row.writtenBy.kind, written_by_id: row.writtenBy.id, updated_at: row.updatedAt})
      .onConflict((oc) => oc.columns(['project_id', 'scope', 'user_id', 'key']).doUpdateSet({value_enc: row.valueEnc, written_by_kind: row.writtenBy.kind, written_by_id: row.writtenBy.id, updated_at: row.updatedAt}))
      .execute()
  },
  async delete(projectId: string, scope: SecretScope, userId: string, key: string): Promise<boolean> {
    const r = await db.deleteFrom('project_secrets').where('project_id', '=', projectId).where('scope', '=', scope).where('user_id', '=', userId).where('key', '=', key).executeTakeFirst()
    return Number(r.numDeletedRows) === 1
  },
})
