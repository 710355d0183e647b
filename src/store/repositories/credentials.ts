import type {Kysely, Selectable} from 'kysely'
import type {AccessTokensTable, Database} from '../schema.js'

export interface AccessToken {
  id: string
  userId: string
  name: string
  projectId: string
  permissions: string[]
  prefix: string
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
}

const toToken = (r: Selectable<AccessTokensTable>): AccessToken => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  projectId: r.project_id,
  permissions: JSON.parse(r.permissions) as string[],
  prefix: r.prefix,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
})

export interface Session {
  id: string
  userId: string
  source: string
  createdAt: string
  expiresAt: string
  revokedAt: string | null
}

/** User access tokens and interactive sessions: both looked up by the hash of their secret. */
export const credentialsRepo = (db: Kysely<Database>) => ({
  async insertToken(t: AccessToken & {tokenHash: string}): Promise<void> {
    await db
      .insertInto('access_tokens')
      .values({
        id: t.id,
        user_id: t.userId,
        name: t.name,
        project_id: t.projectId,
        permissions: JSON.stringify(t.permissions),
        token_hash: t.tokenHash,
        prefix: t.prefix,
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        last_used_at: null,
        revoked_at: null,
      })
      .execute()
  },
  async tokenByHash(hash: string): Promise<AccessToken | null> {
    const r = await db.selectFrom('access_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst()
    return r ? toToken(r) : null
  },
  async getToken(id: string): Promise<AccessToken | null> {
    const r = await db.selectFrom('access_tokens').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toToken(r) : null
  },
  async listTokens(userId: string): Promise<AccessToken[]> {
    const rows = await db.selectFrom('access_tokens').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').execute()
    return rows.map(toToken)
  },
  async revokeToken(id: string, now: string): Promise<boolean> {
    const res = await db.updateTable('access_tokens').set({revoked_at: now}).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst()
    return Number(res.numUpdatedRows) > 0
  },
  async touchToken(id: string, now: string): Promise<void> {
    await db.updateTable('access_tokens').set({last_used_at: now}).where('id', '=', id).execute()
  },
  async insertSession(s: Session & {tokenHash: string}): Promise<void> {
    await db
      .insertInto('sessions')
      .values({id: s.id, user_id: s.userId, token_hash: s.tokenHash, source: s.source, created_at: s.createdAt, expires_at: s.expiresAt, revoked_at: null})
      .execute()
  },
  async sessionByHash(hash: string): Promise<Session | null> {
    const r = await db.selectFrom('sessions').selectAll().where('token_hash', '=', hash).executeTakeFirst()
    return r ? {id: r.id, userId: r.user_id, source: r.source, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at} : null
  },
  async revokeSession(id: string, now: string): Promise<void> {
    await db.updateTable('sessions').set({revoked_at: now}).where('id', '=', id).where('revoked_at', 'is', null).execute()
  },
})

export type CredentialsRepo = ReturnType<typeof credentialsRepo>
