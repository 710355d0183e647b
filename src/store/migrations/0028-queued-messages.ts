import {sql, type Kysely} from 'kysely'

/**
 * Messages kept for an agent whose broker is away (`delivery = 'queued'`): every replica looks
 * for them each second, so they are found through a partial index rather than a scan.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('messages_queued')
    .on('messages')
    .columns(['created_at', 'id'])
    .where(sql<boolean>`delivery = 'queued'`)
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('messages_queued').execute()
}
