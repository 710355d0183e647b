import type {Kysely} from 'kysely'

/**
 * Agent events carry the agent's `error` (and the one before it), so a harness's API, auth or
 * network failure reported on a running agent is an event of its own: the event stream and the
 * webhooks (`harness_error`) see it even when its activity and detail stay what they were.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agent_events').addColumn('error', 'text').execute()
  await db.schema.alterTable('agent_events').addColumn('prev_error', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agent_events').dropColumn('prev_error').execute()
  await db.schema.alterTable('agent_events').dropColumn('error').execute()
}
