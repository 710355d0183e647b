import type {Kysely} from 'kysely'
import {agentConfigFactsOfText} from '../agent-config-facts.js'

/** Rows read and updated per step while filling the columns. */
const PAGE = 1000

/**
 * The facts the delegation planner reads of an agent's config, in columns beside it
 * (agent-config-facts.ts): a full adoption preview over 100k agents read them out of 100k JSON
 * configs. Existing rows are filled from their config here; every row written later gets them
 * with its config. Rows are updated per distinct set of facts (a handful per page), so a large
 * PostgreSQL database costs a few statements per thousand agents, not one per agent.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('config_readable', 'integer', (c) => c.notNull().defaultTo(1)).execute()
  await db.schema.alterTable('agents').addColumn('applied_role', 'text').execute()
  await db.schema.alterTable('agents').addColumn('assign_mode_service_account', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  let after: string | null = null
  for (;;) {
    let q = db.selectFrom('agents').select(['id', 'config']).orderBy('id').limit(PAGE)
    if (after !== null) q = q.where('id', '>', after)
    const rows: Array<{id: string; config: string}> = await q.execute()
    if (rows.length === 0) break
    const groups = new Map<string, {set: Record<string, unknown>; ids: string[]}>()
    for (const r of rows) {
      const f = agentConfigFactsOfText(r.config)
      // The column defaults already say: readable, no applied role, no assign-mode account.
      if (f.readable && f.appliedRole === null && !f.assignModeServiceAccount) continue
      const set = {config_readable: f.readable ? 1 : 0, applied_role: f.appliedRole, assign_mode_service_account: f.assignModeServiceAccount ? 1 : 0}
      const key = JSON.stringify(set)
      const g = groups.get(key)
      if (g) g.ids.push(r.id)
      else groups.set(key, {set, ids: [r.id]})
    }
    for (const {set, ids} of groups.values()) await db.updateTable('agents').set(set).where('id', 'in', ids).execute()
    after = rows[rows.length - 1].id
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['assign_mode_service_account', 'applied_role', 'config_readable']) await db.schema.alterTable('agents').dropColumn(column).execute()
}
