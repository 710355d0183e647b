import type {Kysely} from 'kysely'

/**
 * Environments, ports: the block of ports each agent holds on its broker (`SVC_PORTS`, `PORT`).
 * One row per agent; `(broker_id, first_port)` is unique, so two agents on one broker can never
 * hold the same block, whichever replica allocates. The row goes when the agent is deleted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_ports')
    .addColumn('agent_id', 'text', (c) => c.primaryKey())
    .addColumn('broker_id', 'text', (c) => c.notNull())
    .addColumn('first_port', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('agent_ports_block', ['broker_id', 'first_port'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_ports').execute()
}
