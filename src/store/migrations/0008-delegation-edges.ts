import type {Kysely} from 'kysely'

/**
 * Delegation edges: who delegated authority to each agent, with which role, provenance and
 * effect ceiling. No unique index on the active edge: the invariant "exactly one active edge
 * per agent" is kept by the write paths, and databases written by older builds may break it,
 * which the adoption planner must be able to see (`duplicate_active_edges`).
 *
 * `ceiling` is a JSON array of permission IDs (null when unrecorded); `ceiling_policy` and
 * `ceiling_project_id` mark an adopted ceiling (`v1`, bound to the edge's project).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('delegation_edges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delegate_agent_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('delegator_kind', 'text', (c) => c.notNull())
    .addColumn('delegator_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('provenance_version', 'integer', (c) => c.notNull())
    .addColumn('source_credential_kind', 'text')
    .addColumn('ceiling', 'text')
    .addColumn('ceiling_policy', 'text')
    .addColumn('ceiling_project_id', 'text')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('deactivation_cause', 'text')
    .addColumn('initiator_kind', 'text')
    .addColumn('initiator_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('delegation_edges_delegate').on('delegation_edges').columns(['delegate_agent_id', 'active']).execute()
  await db.schema.createIndex('delegation_edges_delegator').on('delegation_edges').columns(['delegator_kind', 'delegator_id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('delegation_edges').execute()
}
