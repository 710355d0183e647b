import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'
import '../schema-replicas.js'

export interface BrokerHolder {
  brokerId: string
  /** The replica holding the broker's lease (and tunnel). */
  replicaId: string
  /** The holding replica's internal URL. */
  url: string
  /** What the broker advertised in its hello to the holding replica. */
  capabilities: string[]
}

/** The replica directory (migration 0027): replicas' URLs and heartbeats, beside the broker leases. */
export const replicasRepo = (db: Kysely<Database>) => ({
  /** Records (or renews) a replica's heartbeat and URL. */
  async heartbeat(r: {id: string; url: string; now: string}): Promise<void> {
    await db
      .insertInto('replicas')
      .values({id: r.id, url: r.url, started_at: r.now, seen_at: r.now})
      .onConflict((oc) => oc.column('id').doUpdateSet({url: r.url, seen_at: r.now}))
      .execute()
  },
  /** Online brokers with a live lease, held by a replica whose heartbeat is at or after `freshSince`. */
  async holders(now: string, freshSince: string): Promise<BrokerHolder[]> {
    const rows = await db
      .selectFrom('brokers')
      .innerJoin('replicas', 'replicas.id', 'brokers.lease_holder')
      .select(['brokers.id', 'brokers.lease_holder', 'brokers.capabilities', 'replicas.url'])
      .where('brokers.status', '=', 'online')
      .where('brokers.lease_until', '>=', now)
      .where('replicas.seen_at', '>=', freshSince)
      .execute()
    return rows.map((r) => ({brokerId: r.id, replicaId: r.lease_holder!, url: r.url, capabilities: JSON.parse(r.capabilities) as string[]}))
  },
  /** A replica leaving. */
  async remove(replicaId: string): Promise<void> {
    await db.deleteFrom('replicas').where('id', '=', replicaId).execute()
  },
  /** Replicas not seen since `before` (gone long ago). */
  async prune(before: string): Promise<void> {
    await db.deleteFrom('replicas').where('seen_at', '<', before).execute()
  },
})

export type ReplicasRepo = ReturnType<typeof replicasRepo>
