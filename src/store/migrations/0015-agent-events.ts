import {PostgresAdapter, sql, type Kysely} from 'kysely'

/**
 * Agent events and webhook deliveries. `agent_events` is an append-only log of agent changes
 * (phase, activity, detail) with a database-assigned sequence: it is the ID of an SSE event, so a
 * client resumes with `Last-Event-ID` on any replica, and every replica reads new rows from it.
 * `notification_deliveries` is the webhook outbox: one row per (event, channel), claimed by one
 * replica at a time, so an event is delivered once however many replicas run.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter
  // A sequence column: bigserial on PostgreSQL, the rowid alias on SQLite.
  await sql`create table agent_events (
    seq ${sql.raw(pg ? 'bigserial primary key' : 'integer primary key autoincrement')},
    agent_id text not null,
    project_id text not null,
    name text not null,
    phase text not null,
    activity text,
    detail text not null,
    prev_phase text,
    prev_activity text,
    at text not null
  )`.execute(db)
  await db.schema.createIndex('agent_events_at').on('agent_events').column('at').execute()

  await db.schema
    .createTable('notification_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_seq', 'bigint', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('claimed_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('notification_deliveries_due').on('notification_deliveries').columns(['status', 'next_attempt_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('notification_deliveries').execute()
  await db.schema.dropTable('agent_events').execute()
}
