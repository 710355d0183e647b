import type {Kysely} from 'kysely'

/**
 * Broker liveness kept in the database (hosted at scale): the replica holding a broker's tunnel
 * (`lease_holder`, a random ID per Hub process) renews `lease_until` while the tunnel is open.
 * Any replica marks an `online` broker whose lease ran out `offline`, so the brokers of a replica
 * that crashed (and cannot say so) go offline on every survivor within the lease.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('brokers').addColumn('lease_holder', 'text').execute()
  await db.schema.alterTable('brokers').addColumn('lease_until', 'text').execute()
  await db.schema.createIndex('brokers_status_lease').on('brokers').columns(['status', 'lease_until']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('brokers_status_lease').execute()
  await db.schema.alterTable('brokers').dropColumn('lease_until').execute()
  await db.schema.alterTable('brokers').dropColumn('lease_holder').execute()
}
