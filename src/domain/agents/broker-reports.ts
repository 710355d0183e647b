/**
 * What a broker tells the Hub about the agents it runs, outside any user's request: its hello
 * (which sessions and workspaces it holds), an agent's session ending, and the liveness report.
 * The Hub stops what it no longer wants and records what ended.
 */
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import {iso} from '../shared/clock.js'
import type {Deps} from '../deps.js'
import {PHASES} from './agent-state.js'
import type {AgentTokens} from './agent-tokens.js'
import type {StatusWriter} from './status-writer.js'

export interface BrokerReportDeps {
  gateway: BrokerGateway
  status: StatusWriter
  tokens: AgentTokens
  /** Keeps an ended agent's output (masked). */
  archive(agentId: string, base64: string | undefined): Promise<unknown>
  /** Its broker stopped it at its duration: its team's time ran out with it. */
  durationRanOut(agentId: string): Promise<void>
}

export function createBrokerReports(deps: Deps, r: BrokerReportDeps) {
  const {store, clock} = deps
  const now = () => iso(clock.now())

  /**
   * A session the Hub does not want: of an agent it does not know, deleted, stopped, or in
   * `error` (a start that answered after the Hub gave up on it; its token is revoked too).
   */
  const unwanted = (rec: AgentRecord | undefined) => !rec || rec.deletedAt !== null || rec.phase === 'stopped' || rec.phase === 'error'

  /** Stops the sessions among `running` that the Hub does not want. */
  async function stopUnwanted(brokerId: string, running: string[], byId: Map<string, AgentRecord>): Promise<void> {
    for (const id of running) {
      if (unwanted(byId.get(id))) await r.gateway.request(brokerId, 'agent.stop', {agentId: id}, 30_000).catch(() => {})
    }
  }

  return {
    /**
     * The Hub's agents on `brokerId` as the broker's hello arrives, before the broker counts as
     * online: what `reconcile` judges against the hello's list (a snapshot of the same moment).
     */
    async agentsAtHello(brokerId: string): Promise<AgentRecord[]> {
      return store.agents.list({brokerId, includeDeleted: true})
    },

    /**
     * A broker says which agents it runs: stop what the Hub deleted, mark lost sessions. Judged
     * on `known` (agentsAtHello, read before the broker was marked online): an agent started on
     * the broker once it was online is not in the hello's list, and must not be marked lost for
     * that (a create right after a broker connects, as on a workstation Hub's start).
     */
    async reconcile(brokerId: string, known: AgentRecord[], running: string[], workspaces: string[] = []): Promise<void> {
      // A session of an agent the snapshot does not hold is not one the Hub gave this broker: stopped.
      const byId = new Map(known.map((k) => [k.id, k]))
      // Workspaces of agents deleted while their broker was away: removed now (branches stay).
      for (const id of workspaces) {
        const rec = byId.get(id)
        if (rec?.deletedAt && !running.includes(id)) {
          await r.gateway.request(brokerId, 'agent.stop', {agentId: id, removeWorkspace: rec.workspace ?? {path: '', branch: '', baseRef: '', baseCommit: ''}}, 120_000).catch(() => {})
        }
      }
      await stopUnwanted(brokerId, running, byId)
      const live = new Set(running)
      for (const rec of known) {
        if (!rec.deletedAt && rec.phase === 'running' && !live.has(rec.id)) {
          // A report still pending would otherwise write its phase over the stop.
          await r.status.forget(rec.id)
          await store.agents.update(rec.id, {phase: 'stopped', activity: null, error: 'the broker no longer runs this agent'}, now())
          // As at any other end: a sandbox the broker lost track of may still hold the token.
          await r.tokens.revokeAll(rec.id)
        }
      }
    },

    async brokerReportedStatus(brokerId: string, ev: {agentId: string; phase: string; activity?: string; detail?: string; error?: string; log?: string}): Promise<void> {
      const agent = await store.agents.get(ev.agentId)
      if (!agent || agent.brokerId !== brokerId || agent.deletedAt) return
      if (!(PHASES as readonly string[]).includes(ev.phase)) return
      await r.archive(agent.id, ev.log)
      await r.status.forget(agent.id)
      await store.agents.update(agent.id, {phase: ev.phase, ...(ev.detail !== undefined && {detail: ev.detail}), ...(ev.error !== undefined && {error: ev.error}), ...(ev.phase !== 'running' && {activity: ev.activity === 'limits_exceeded' ? 'limits_exceeded' : null})}, now())
      if (ev.phase === 'stopped' || ev.phase === 'error') await r.tokens.revokeAll(agent.id)
      // Its broker stopped it at its duration: its team's time ran out with it.
      if (ev.phase === 'stopped' && ev.activity === 'limits_exceeded') void r.durationRanOut(agent.id)
    },

    /**
     * The broker sees these agents' sessions alive: that counts as their heartbeat. A session the
     * Hub no longer wants is stopped, as at the broker's hello, within one report (15 s).
     */
    async brokerReportedAlive(brokerId: string, agentIds: string[]): Promise<void> {
      const byId = new Map((await store.agents.list({ids: agentIds, includeDeleted: true})).map((k) => [k.id, k]))
      // A liveness heartbeat: not waited for (the broker's next report carries it again).
      for (const id of agentIds) if (!unwanted(byId.get(id))) void r.status.report(id, {})
      await stopUnwanted(brokerId, agentIds, byId)
    },

  }
}
