import type {Kysely} from 'kysely'

/**
 * Every adoption preview reads, for each record naming an original edge, its ID, status and
 * creation time (which record tracks each planned edge). Records also keep summaries of their
 * ceilings, so over 100k records a scan of the table reads every summary too; an index carrying
 * the four columns is read instead. It replaces the single-column index on the original edge.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('delegation_adoptions_original').execute()
  await db.schema.createIndex('delegation_adoptions_original').on('delegation_adoptions').columns(['original_edge_id', 'status', 'id', 'created_at']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('delegation_adoptions_original').execute()
  await db.schema.createIndex('delegation_adoptions_original').on('delegation_adoptions').column('original_edge_id').execute()
}
