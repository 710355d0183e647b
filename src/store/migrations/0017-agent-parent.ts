import type {Kysely} from 'kysely'

/**
 * Teams: an agent's parent (the agent whose credential created it, or the one a person named
 * with `--parent`). The name is kept beside the ID because agents are never renamed and every
 * read of an agent shows `parent: {id, name}` without a second look-up.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('parent_id', 'text').execute()
  await db.schema.alterTable('agents').addColumn('parent_name', 'text').execute()
  await db.schema.createIndex('agents_parent').on('agents').column('parent_id').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('agents_parent').execute()
  await db.schema.alterTable('agents').dropColumn('parent_name').execute()
  await db.schema.alterTable('agents').dropColumn('parent_id').execute()
}
