import type {Kysely} from 'kysely'

/**
 * Real coding agents: each agent's git workspace (`{path, branch, baseRef, baseCommit}` as JSON),
 * the runtime image and sandbox it was dispatched with, its turn count (for `max_turns`) and the
 * usage its harness reported (JSON); each project's checkout on the co-located broker's machine.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('workspace', 'text').execute()
  await db.schema.alterTable('agents').addColumn('image', 'text').execute()
  await db.schema.alterTable('agents').addColumn('sandbox', 'text').execute()
  await db.schema.alterTable('agents').addColumn('turns', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('agents').addColumn('usage', 'text').execute()
  await db.schema.alterTable('projects').addColumn('local_path', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['usage', 'turns', 'sandbox', 'image', 'workspace']) await db.schema.alterTable('agents').dropColumn(column).execute()
  await db.schema.alterTable('projects').dropColumn('local_path').execute()
}
