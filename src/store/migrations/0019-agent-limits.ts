import type {Kysely} from 'kysely'

/**
 * Teams, budgets along the chain: an agent's effective `limits` (turns, model calls, duration,
 * cost, children, depth) as JSON, fixed at create (asked for, lowered to what its parent had
 * left and to the Hub's and project's defaults). Null for agents created before: their limits
 * are read from the settings applied at their creation (teams/budgets.ts, limitsOf).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('limits', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').dropColumn('limits').execute()
}
