import {sql, type Kysely} from 'kysely'

/** Runtime brokers and their join tokens, agents and agent tokens, archived logs, templates. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('brokers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('capabilities', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('runtimes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('version', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('colocated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('joined_at', 'text')
    .addColumn('last_seen_at', 'text')
    .execute()

  await db.schema
    .createTable('broker_join_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('broker_id', 'text', (c) => c.notNull().references('brokers.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute()

  await db.schema.alterTable('projects').addColumn('default_broker_id', 'text').execute()

  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('broker_id', 'text')
    .addColumn('phase', 'text', (c) => c.notNull())
    .addColumn('activity', 'text')
    .addColumn('detail', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('harness_config', 'text', (c) => c.notNull())
    .addColumn('template', 'text')
    .addColumn('task', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('runtime', 'text')
    .addColumn('runtime_ref', 'text')
    .addColumn('config', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('error', 'text')
    .addColumn('created_by_kind', 'text', (c) => c.notNull())
    .addColumn('created_by_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_heartbeat_at', 'text')
    .addColumn('deleted_at', 'text')
    .execute()
  // A name is unique among the live agents of a project; a deleted agent frees its name.
  await db.schema.createIndex('agents_project_name').on('agents').columns(['project_id', 'name']).unique().where(sql.ref('deleted_at'), 'is', null).execute()
  await db.schema.createIndex('agents_broker').on('agents').column('broker_id').execute()

  await db.schema
    .createTable('agent_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema.createIndex('agent_tokens_agent').on('agent_tokens').column('agent_id').execute()

  await db.schema
    .createTable('agent_log_archives')
    .addColumn('agent_id', 'text', (c) => c.primaryKey())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // '' for a hub-wide template: a portable unique key (NULLs are distinct in unique indexes).
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('current_version', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('templates_scope_name', ['scope', 'name'])
    .execute()

  await db.schema
    .createTable('template_versions')
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('manifest', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('template_versions_pk', ['template_id', 'seq'])
    .execute()

  await db.schema
    .createTable('template_files')
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('template_files_pk', ['template_id', 'seq', 'path'])
    .addForeignKeyConstraint('template_files_version', ['template_id', 'seq'], 'template_versions', ['template_id', 'seq'], (fk) => fk.onDelete('cascade'))
    .execute()
}
