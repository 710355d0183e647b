import type {Kysely} from 'kysely'

/**
 * Provenance adoption records: one per examined edge of the start-up cohort, plus those of
 * admin commits. No foreign keys (the spec keeps records indefinitely, whatever happens to the
 * edges and agents they name). Summaries are JSON text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('delegation_adoptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('original_edge_id', 'text')
    .addColumn('adopted_edge_id', 'text')
    .addColumn('before_fingerprint', 'text')
    .addColumn('project_id', 'text')
    .addColumn('delegate_agent_id', 'text')
    .addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('actor_kind', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('after_summary', 'text')
    .addColumn('reverted_by_kind', 'text')
    .addColumn('reverted_by_id', 'text')
    .addColumn('reverted_at', 'text')
    .addColumn('revert_summary', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('delegation_adoptions_status').on('delegation_adoptions').columns(['status', 'reason']).execute()
  await db.schema.createIndex('delegation_adoptions_original').on('delegation_adoptions').column('original_edge_id').execute()
  await db.schema.createIndex('delegation_adoptions_adopted').on('delegation_adoptions').column('adopted_edge_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('delegation_adoptions').execute()
}
