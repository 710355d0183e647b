import type {Kysely} from 'kysely'

/**
 * Teams, attempts: the group an attempt belongs to (`svc agent create fix --attempts 3` makes
 * fix-1..fix-3 in group `fix`), the check command run in its sandbox whenever it goes idle, and
 * the last check's result as JSON (`{status, exitCode, output}`). All null for other agents.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('group_name', 'text').execute()
  await db.schema.alterTable('agents').addColumn('check_command', 'text').execute()
  await db.schema.alterTable('agents').addColumn('check_result', 'text').execute()
  await db.schema.createIndex('agents_group').on('agents').columns(['project_id', 'group_name']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('agents_group').execute()
  await db.schema.alterTable('agents').dropColumn('check_result').execute()
  await db.schema.alterTable('agents').dropColumn('check_command').execute()
  await db.schema.alterTable('agents').dropColumn('group_name').execute()
}
