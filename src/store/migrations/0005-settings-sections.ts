import type {Kysely} from 'kysely'

/**
 * Layer-1 settings sections: one row per section, the value a JSON document of the section's keys
 * (dotted key -> value), with its origin (`seeded` or `managed`), source, revision and last writer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('settings_sections')
    .addColumn('section', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('settings_sections').execute()
}
