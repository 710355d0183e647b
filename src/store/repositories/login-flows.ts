import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'

export interface LoginFlow<T = Record<string, unknown>> {
  id: string
  kind: string
  data: T
  createdAt: string
  expiresAt: string
  consumedAt: string | null
}

/** Pending sign-in flows, kept in the database so any replica can finish what another began. */
export const loginFlowsRepo = (db: Kysely<Database>) => ({
  async insert(f: Omit<LoginFlow, 'consumedAt'>): Promise<void> {
    await db
      .insertInto('login_flows')
      .values({id: f.id, kind: f.kind, data: JSON.stringify(f.data), created_at: f.createdAt, expires_at: f.expiresAt, consumed_at: null})
      .execute()
  },
  async get<T>(id: string, kind: string): Promise<LoginFlow<T> | null> {
    const r = await db.selectFrom('login_flows').selectAll().where('id', '=', id).where('kind', '=', kind).executeTakeFirst()
    return r ? {id: r.id, kind: r.kind, data: JSON.parse(r.data) as T, createdAt: r.created_at, expiresAt: r.expires_at, consumedAt: r.consumed_at} : null
  },
  async update(id: string, data: Record<string, unknown>): Promise<void> {
    await db.updateTable('login_flows').set({data: JSON.stringify(data)}).where('id', '=', id).execute()
  },
  /** Marks a flow used; true only for the one caller that consumed it (single use under races). */
  async consume(id: string, now: string): Promise<boolean> {
    const res = await db.updateTable('login_flows').set({consumed_at: now}).where('id', '=', id).where('consumed_at', 'is', null).executeTakeFirst()
    return Number(res.numUpdatedRows) === 1
  },
  async deleteExpired(now: string): Promise<void> {
    await db.deleteFrom('login_flows').where('expires_at', '<', now).execute()
  },
})

export type LoginFlowsRepo = ReturnType<typeof loginFlowsRepo>
