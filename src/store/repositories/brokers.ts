import type {Kysely, Selectable} from 'kysely'
import type {BrokersTable, Database} from '../schema.js'
import {brokerLeasesRepo} from './broker-leases.js'

export type BrokerStatus = 'pending' | 'online' | 'offline'

export interface Broker {
  id: string
  name: string
  status: BrokerStatus
  capabilities: string[]
  runtimes: string[]
  version: string
  colocated: boolean
  createdBy: string
  createdAt: string
  updatedAt: string
  joinedAt: string | null
  lastSeenAt: string | null
}

const toBroker = (r: Selectable<BrokersTable>): Broker => ({
  id: r.id,
  name: r.name,
  status: r.status as BrokerStatus,
  capabilities: JSON.parse(r.capabilities),
  runtimes: JSON.parse(r.runtimes),
  version: r.version,
  colocated: r.colocated === 1,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  joinedAt: r.joined_at,
  lastSeenAt: r.last_seen_at,
})

export const brokersRepo = (db: Kysely<Database>) => ({
  /** Liveness leases (migration 0025, broker-leases.ts). */
  leases: brokerLeasesRepo(db),
  /** `secret` is stored as given: the domain seals it first (domain/brokers/broker-secrets.ts). */
  async insert(b: {id: string; name: string; colocated: boolean; createdBy: string; now: string; secret?: string | null}): Promise<Broker> {
    const r = await db
      .insertInto('brokers')
      .values({id: b.id, name: b.name, status: 'pending', secret: b.secret ?? null, capabilities: '[]', runtimes: '[]', version: '', colocated: b.colocated ? 1 : 0, created_by: b.createdBy, created_at: b.now, updated_at: b.now, joined_at: b.secret ? b.now : null})
      .returningAll()
      .executeTakeFirstOrThrow()
    return toBroker(r)
  },
  async get(id: string): Promise<Broker | null> {
    const r = await db.selectFrom('brokers').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toBroker(r) : null
  },
  async colocated(): Promise<(Broker & {secret: string | null}) | null> {
    const r = await db.selectFrom('brokers').selectAll().where('colocated', '=', 1).orderBy('created_at').executeTakeFirst()
    return r ? {...toBroker(r), secret: r.secret} : null
  },
  /** The broker's stored (sealed) signing secret; null until it joined. */
  async secretOf(id: string): Promise<string | null> {
    const r = await db.selectFrom('brokers').select('secret').where('id', '=', id).executeTakeFirst()
    return r?.secret ?? null
  },
  async list(): Promise<Broker[]> {
    const rows = await db.selectFrom('brokers').selectAll().orderBy('created_at').orderBy('id').execute()
    return rows.map(toBroker)
  },
  async setSecret(id: string, secret: string, now: string): Promise<void> {
    await db.updateTable('brokers').set({secret, joined_at: now, updated_at: now, status: 'offline'}).where('id', '=', id).execute()
  },
  /** Every stored secret (the start-up sealing of plaintext ones). */
  async storedSecrets(): Promise<Array<{id: string; secret: string}>> {
    const rows = await db.selectFrom('brokers').select(['id', 'secret']).where('secret', 'is not', null).execute()
    return rows.map((r) => ({id: r.id, secret: r.secret!}))
  },
  /** Replaces a stored secret only if it still is `from` (compare-and-set); true when it was. */
  async replaceSecret(id: string, from: string, to: string): Promise<boolean> {
    const r = await db.updateTable('brokers').set({secret: to}).where('id', '=', id).where('secret', '=', from).executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  },
  async markConnected(id: string, info: {capabilities: string[]; runtimes: string[]; version: string}, now: string): Promise<void> {
    await db
      .updateTable('brokers')
      .set({status: 'online', capabilities: JSON.stringify(info.capabilities), runtimes: JSON.stringify(info.runtimes), version: info.version, last_seen_at: now, updated_at: now})
      .where('id', '=', id)
      .execute()
  },
  async markSeen(id: string, now: string): Promise<void> {
    await db.updateTable('brokers').set({last_seen_at: now}).where('id', '=', id).execute()
  },
  async insertJoinToken(t: {id: string; brokerId: string; tokenHash: string; now: string; expiresAt: string}): Promise<void> {
    await db.insertInto('broker_join_tokens').values({id: t.id, broker_id: t.brokerId, token_hash: t.tokenHash, created_at: t.now, expires_at: t.expiresAt, used_at: null}).execute()
  },
  /** Uses a join token once; returns its broker ID, or null when unknown, expired or used. */
  async useJoinToken(tokenHash: string, now: string): Promise<string | null> {
    const r = await db.selectFrom('broker_join_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
    if (!r || r.used_at || r.expires_at <= now) return null
    const res = await db.updateTable('broker_join_tokens').set({used_at: now}).where('id', '=', r.id).where('used_at', 'is', null).executeTakeFirst()
    return Number(res.numUpdatedRows) === 1 ? r.broker_id : null
  },
  /**
   * Records a signed request's nonce; false when any replica recorded it already (a replay).
   * Expired rows are removed first, so the primary key only ever holds the live window.
   */
  async acceptNonce(nonce: string, now: string, expiresAt: string): Promise<boolean> {
    await db.deleteFrom('broker_nonces').where('expires_at', '<', now).execute()
    const r = await db.insertInto('broker_nonces').values({nonce, expires_at: expiresAt}).onConflict((oc) => oc.column('nonce').doNothing()).executeTakeFirst()
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1
  },
})

export type BrokersRepo = ReturnType<typeof brokersRepo>
