import type {Kysely} from 'kysely'

/**
 * Project and user secrets of a project. `user_id` is '' for project scope. Values are stored
 * encrypted (AES-256-GCM, `value_enc` = iv.tag.ciphertext in base64url) and never listed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('project_secrets')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value_enc', 'text', (c) => c.notNull())
    .addColumn('written_by_kind', 'text', (c) => c.notNull())
    .addColumn('written_by_id', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_secrets_pk', ['project_id', 'scope', 'user_id', 'key'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('project_secrets').execute()
}
