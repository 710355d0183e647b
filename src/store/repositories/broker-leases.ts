import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'
import {appendAgentEvent} from './agent-events.js'
import '../schema-broker-leases.js'

/**
 * Broker liveness with leases (migration 0025). The replica holding a broker's tunnel takes its
 * lease when the broker says hello and renews it on a timer; any replica expires a lease that
 * ran out. Every change of a broker's liveness is one conditional update, so of several replicas
 * racing exactly one makes it, and that one writes the agent events it implies in the same
 * statement order (callers run these inside a transaction): a broker going offline logs an
 * `offline` activity for each of its running agents, its return logs their stored activity again.
 * Agent rows are not changed: what an agent reports about itself stays its state. Callers wake
 * the replicas' event feeds after the commit (the feeds' poll is the backstop).
 */
export const brokerLeasesRepo = (db: Kysely<Database>) => {
  /** Logs, for each running agent of the broker, the move from `from` to `to` (`null`: its stored activity). */
  async function logAgents(brokerId: string, going: 'offline' | 'back', now: string): Promise<number> {
    const rows = await db
      .selectFrom('agents')
      .select(['id', 'project_id', 'name', 'phase', 'activity', 'detail', 'error'])
      .where('broker_id', '=', brokerId)
      .where('phase', '=', 'running')
      .where('deleted_at', 'is', null)
      .execute()
    for (const r of rows) {
      const stored = {phase: r.phase, activity: r.activity, detail: r.detail, error: r.error, deleted: false}
      const offline = {...stored, activity: 'offline'}
      const [before, after] = going === 'offline' ? [stored, offline] : [offline, stored]
      if (before.activity === after.activity) continue
      await appendAgentEvent(db, before, {id: r.id, projectId: r.project_id, name: r.name, ...after}, now)
    }
    return rows.length
  }

  return {
    /**
     * The broker said hello to `holder`: it is online with a lease until `until`. True when it was
     * not online before (pending or offline): its agents' return is logged.
     */
    async take(brokerId: string, holder: string, until: string, now: string): Promise<boolean> {
      const r = await db.updateTable('brokers').set({status: 'online', lease_holder: holder, lease_until: until, last_seen_at: now, updated_at: now}).where('id', '=', brokerId).where('status', '!=', 'online').executeTakeFirst()
      if (Number(r.numUpdatedRows) === 1) {
        await logAgents(brokerId, 'back', now)
        return true
      }
      // Online already: it moved from another replica within its lease (no gap to report).
      await db.updateTable('brokers').set({lease_holder: holder, lease_until: until, last_seen_at: now}).where('id', '=', brokerId).execute()
      return false
    },
    /** Extends the leases `holder` holds among `brokerIds` (a broker taken over by another replica meanwhile is not). */
    async renew(holder: string, brokerIds: string[], until: string, now: string): Promise<void> {
      if (!brokerIds.length) return
      await db.updateTable('brokers').set({lease_until: until, last_seen_at: now}).where('lease_holder', '=', holder).where('status', '=', 'online').where('id', 'in', brokerIds).execute()
    },
    /**
     * The tunnel `holder` held closed: the broker is offline unless another replica holds it by
     * now. True when this call made it offline (its agents' `offline` is logged).
     */
    async release(brokerId: string, holder: string, now: string): Promise<boolean> {
      const r = await db.updateTable('brokers').set({status: 'offline', lease_until: now, updated_at: now}).where('id', '=', brokerId).where('lease_holder', '=', holder).where('status', '=', 'online').executeTakeFirst()
      if (Number(r.numUpdatedRows) !== 1) return false
      await logAgents(brokerId, 'offline', now)
      return true
    },
    /** Those of `brokerIds` not `online` now (held by a replica that could not renew them for a while). */
    async notOnline(brokerIds: string[]): Promise<string[]> {
      if (!brokerIds.length) return []
      return (await db.selectFrom('brokers').select('id').where('id', 'in', brokerIds).where('status', '!=', 'online').execute()).map((r) => r.id)
    },
    /** Online brokers whose lease ran out (their replica is gone, or lost the database): candidates for `expire`. */
    async expired(now: string): Promise<string[]> {
      const rows = await db
        .selectFrom('brokers')
        .select('id')
        .where('status', '=', 'online')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .execute()
      return rows.map((r) => r.id)
    },
    /** Makes one broker with a lapsed lease offline; true when this call did (one replica of those racing). */
    async expire(brokerId: string, now: string): Promise<boolean> {
      const r = await db
        .updateTable('brokers')
        .set({status: 'offline', updated_at: now})
        .where('id', '=', brokerId)
        .where('status', '=', 'online')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .executeTakeFirst()
      if (Number(r.numUpdatedRows) !== 1) return false
      await logAgents(brokerId, 'offline', now)
      return true
    },
  }
}

export type BrokerLeasesRepo = ReturnType<typeof brokerLeasesRepo>
