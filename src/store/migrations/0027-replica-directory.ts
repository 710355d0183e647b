import type {Kysely} from 'kysely'

/**
 * The replica directory (any replica serves any agent): each Hub replica's internal URL with a
 * heartbeat. Its id is the lease holder of the brokers it holds (brokers.lease_holder, 0025), so
 * a replica that does not hold a broker finds the one that does, and forwards to it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('replicas')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('seen_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('replicas').execute()
}
