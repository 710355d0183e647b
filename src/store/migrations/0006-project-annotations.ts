import type {Kysely} from 'kysely'

/** Project annotations: `svc/`-prefixed project settings, one row per set key. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('project_annotations')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_annotations_pk', ['project_id', 'key'])
    .execute()
}
