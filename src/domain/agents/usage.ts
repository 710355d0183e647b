import type {AgentUsage, SessionUsageTotals} from '../../api/dto.js'
import type {SessionUsage} from '../../broker/harnesses/types.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {Store} from '../../store/store.js'
import {costOf, priceOf} from './model-prices.js'

/** One session's totals as stored, with its cost from the harness or the price table. */
export function sessionTotals(u: SessionUsage): SessionUsageTotals {
  const price = u.costUsd === undefined ? priceOf(u.model) : null
  const costUsd = u.costUsd ?? (price ? costOf(price, u) : 0)
  return {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    ...(u.cacheReadTokens !== undefined && {cacheReadTokens: u.cacheReadTokens}),
    ...(u.cacheWriteTokens !== undefined && {cacheWriteTokens: u.cacheWriteTokens}),
    modelCalls: u.modelCalls,
    costUsd,
    ...(u.model && {model: u.model}),
    costFrom: u.costUsd !== undefined ? 'harness' : price ? 'price_table' : 'unpriced',
  }
}

/** The agent's totals: the sum over its sessions' latest totals. */
export function sumSessions(sessions: Record<string, SessionUsageTotals>): AgentUsage {
  const out: AgentUsage = {inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, modelCalls: 0, costUsd: 0}
  for (const s of Object.values(sessions)) {
    out.inputTokens += s.inputTokens
    out.outputTokens += s.outputTokens
    out.cacheReadTokens! += s.cacheReadTokens ?? 0
    out.cacheWriteTokens! += s.cacheWriteTokens ?? 0
    out.modelCalls += s.modelCalls
    out.costUsd += s.costUsd
  }
  out.costUsd = Math.round(out.costUsd * 1e6) / 1e6
  return {...out, sessions}
}

/** `max_model_calls` as applied when the agent was created (null: no limit). */
export function maxModelCallsOf(agent: AgentRecord): number | null {
  const v = (agent.config.applied as Record<string, {value?: unknown}> | undefined)?.defaultMaxModelCalls?.value
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null
}

/**
 * Records a harness's cumulative usage report: the session's totals are replaced (a report
 * repeats what came before, so a lost or repeated one changes nothing), the agent's totals are
 * the sum over sessions. Read, sum and write run under the agent's row lock. Returns the new
 * totals and whether they exceed the agent's `max_model_calls`.
 */
export async function recordUsage(store: Store, agentId: string, report: SessionUsage, now: string): Promise<{usage: AgentUsage; limit: number | null; exceeded: boolean; agent: AgentRecord} | null> {
  return store.transaction(async (tx) => {
    await tx.locks.agent(agentId)
    const agent = await tx.agents.get(agentId)
    if (!agent || agent.deletedAt) return null
    const sessions = {...(agent.usage?.sessions ?? {}), [report.sessionId]: sessionTotals(report)}
    const usage = sumSessions(sessions)
    await tx.agents.update(agentId, {usage}, now)
    const limit = maxModelCallsOf(agent)
    return {usage, limit, exceeded: limit !== null && usage.modelCalls > limit, agent: {...agent, usage}}
  })
}

/** Usage summed over a project's agents (project stats). */
export async function projectUsage(store: Store, projectId: string): Promise<Omit<AgentUsage, 'sessions'>> {
  const out = {inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, modelCalls: 0, costUsd: 0}
  for (const a of await store.agents.list({projectIds: [projectId], includeDeleted: true})) {
    const u = a.usage
    if (!u) continue
    out.inputTokens += u.inputTokens
    out.outputTokens += u.outputTokens
    out.cacheReadTokens += u.cacheReadTokens ?? 0
    out.cacheWriteTokens += u.cacheWriteTokens ?? 0
    out.modelCalls += u.modelCalls
    out.costUsd += u.costUsd
  }
  out.costUsd = Math.round(out.costUsd * 1e6) / 1e6
  return out
}
