import {sql, type Kysely} from 'kysely'

/**
 * Approvals (issue 28): each permission request of a harness, held until a person, a rule, the
 * agent's parent or the terminal answers it, or its hook stops waiting (`expires_at`).
 * `decided_by` is JSON (`{kind, id|index}`), `input` the tool's input as JSON. The agent event
 * log gains `approval`: the approval as requested (JSON) on an `approval_requested` event row,
 * null on the rows of agent changes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table approvals (
    id text primary key,
    agent_id text not null,
    project_id text not null,
    agent_name text not null,
    tool text not null,
    summary text not null,
    input text not null,
    state text not null,
    created_at text not null,
    expires_at text not null,
    decided_by text,
    decided_at text,
    reason text
  )`.execute(db)
  await db.schema.createIndex('approvals_agent').on('approvals').columns(['agent_id', 'state']).execute()
  await db.schema.createIndex('approvals_project').on('approvals').columns(['project_id', 'state']).execute()
  await db.schema.alterTable('agent_events').addColumn('approval', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agent_events').dropColumn('approval').execute()
  await db.schema.dropTable('approvals').execute()
}
