import type {Kysely} from 'kysely'

/**
 * Nonces of signed broker requests, shared by every replica so a captured request is accepted
 * once across the whole deployment, not once per process. Rows expire after the skew window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('broker_nonces')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('broker_nonces_expiry').on('broker_nonces').column('expires_at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('broker_nonces').execute()
}
