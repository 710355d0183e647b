import type {Kysely} from 'kysely'
import {isUniqueViolation} from '../db-errors.js'
import type {Database} from '../schema.js'

/** An agent's block of ports on its broker: `first`..`first + size - 1`. */
export interface PortBlock {
  brokerId: string
  first: number
}

/**
 * Port blocks per agent (migration 0023). `claim` takes the lowest free block of a range in
 * one insert guarded by the `(broker_id, first_port)` unique constraint: two creates racing for
 * the same block (on one replica or two) get different blocks, never the same one.
 */
export const agentPortsRepo = (db: Kysely<Database>) => ({
  async get(agentId: string): Promise<PortBlock | null> {
    const r = await db.selectFrom('agent_ports').select(['broker_id', 'first_port']).where('agent_id', '=', agentId).executeTakeFirst()
    return r ? {brokerId: r.broker_id, first: Number(r.first_port)} : null
  },

  /**
   * The agent's block on `brokerId`, claimed now when it has none: the lowest block start of
   * `starts` no row holds. Null when every block is held. Blocks of deleted agents are freed
   * first (a delete whose release failed must not hold its block forever).
   */
  async claim(agentId: string, brokerId: string, starts: number[], now: string): Promise<PortBlock | null> {
    const held = await this.get(agentId)
    if (held && held.brokerId === brokerId) return held
    if (held) await db.deleteFrom('agent_ports').where('agent_id', '=', agentId).execute()
    await db
      .deleteFrom('agent_ports')
      .where('broker_id', '=', brokerId)
      .where('agent_id', 'in', (eb) => eb.selectFrom('agents').select('id').where('deleted_at', 'is not', null))
      .execute()
    for (let attempt = 0; attempt < 20; attempt++) {
      const taken = new Set((await db.selectFrom('agent_ports').select('first_port').where('broker_id', '=', brokerId).execute()).map((r) => Number(r.first_port)))
      const first = starts.find((s) => !taken.has(s))
      if (first === undefined) return null
      try {
        await db.insertInto('agent_ports').values({agent_id: agentId, broker_id: brokerId, first_port: first, created_at: now}).execute()
        return {brokerId, first}
      } catch (err) {
        // Another create took this block (or this agent's row) meanwhile: look again.
        if (!isUniqueViolation(err)) throw err
        const mine = await this.get(agentId)
        if (mine) return mine
      }
    }
    return null
  },

  async release(agentId: string): Promise<void> {
    await db.deleteFrom('agent_ports').where('agent_id', '=', agentId).execute()
  },
})
