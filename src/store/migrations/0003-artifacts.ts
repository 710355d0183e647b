import type {Kysely} from 'kysely'

/**
 * Artifacts, their versions, the files of each version (the manifest) and read grants.
 * `project_id` deliberately has no foreign key: deleting a project keeps its artifacts.
 * Owners are recorded by kind and stable ID (a user or an agent), also without a foreign key,
 * so artifacts outlive the agent that published them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('artifacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('owner_kind', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('current_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('artifacts_project').on('artifacts').column('project_id').execute()
  await db.schema.createIndex('artifacts_owner').on('artifacts').columns(['owner_kind', 'owner_id']).execute()

  await db.schema
    .createTable('artifact_versions')
    .addColumn('artifact_id', 'text', (c) => c.notNull().references('artifacts.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('entry_path', 'text', (c) => c.notNull())
    .addColumn('created_by_kind', 'text', (c) => c.notNull())
    .addColumn('created_by_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('artifact_versions_pk', ['artifact_id', 'seq'])
    .execute()

  await db.schema
    .createTable('artifact_files')
    .addColumn('artifact_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('media_type', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('artifact_files_pk', ['artifact_id', 'seq', 'path'])
    .addForeignKeyConstraint('artifact_files_version', ['artifact_id', 'seq'], 'artifact_versions', ['artifact_id', 'seq'], (fk) => fk.onDelete('cascade'))
    .execute()

  await db.schema
    .createTable('artifact_grants')
    .addColumn('artifact_id', 'text', (c) => c.notNull().references('artifacts.id').onDelete('cascade'))
    .addColumn('grantee_kind', 'text', (c) => c.notNull())
    .addColumn('grantee_id', 'text', (c) => c.notNull())
    .addColumn('granted_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('artifact_grants_pk', ['artifact_id', 'grantee_kind', 'grantee_id'])
    .execute()
  await db.schema.createIndex('artifact_grants_grantee').on('artifact_grants').columns(['grantee_kind', 'grantee_id']).execute()
}
