import type {Kysely} from 'kysely'

/**
 * A full adoption preview reads nine columns of every agent (agents.listPlannerWorld); a scan of
 * the table also steps over every agent's config (~0.7 KB each as creation stores it): 25k pages
 * for 100k agents, against ~3.5k for an index carrying those columns. Measured on the planner
 * bench's 100k-agent fixture (SQLite, in one process): the read's rows 250 -> 150-160 ms of CPU.
 * The status writer, the hot write of agents, changes none of these columns, so it writes no
 * entry of it; creation and deletion write one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('agents_planner')
    .on('agents')
    .columns(['id', 'project_id', 'role', 'deleted_at', 'config_readable', 'applied_role', 'assign_mode_service_account', 'created_by_kind', 'created_by_id'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('agents_planner').execute()
}
