/**
 * Teams, budgets along the chain: after a usage report or an ended turn is written, the
 * reporting agent and each of its ancestors is checked against its limits with its whole
 * subtree's spending. The highest agent over a limit is the one whose budget ran out: it and all
 * its descendants are stopped (activity `limits_exceeded`, a detail naming the limit and that
 * agent) through the same stop as a single agent's max_turns. An agent with no descendants is
 * the old single-agent case (its own max_turns and max_model_calls).
 */
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {Store} from '../../store/store.js'
import type {Deps} from '../deps.js'
import {ancestorsOf, limitsOf, subtreeUsage, USAGE_KEYS, type SubtreeUsage} from './budgets.js'
import type {AgentLimits} from '../../api/dto.js'

type Stop = (agent: AgentRecord, detail: string) => Promise<void>

/**
 * Turns stop at the turn that reaches the limit (as max_turns always did); calls and cost once
 * passed. The detail keeps the settings' names (max_turns, ...) beside the limit's.
 */
function overLimit(l: AgentLimits, u: SubtreeUsage): {key: string; text: string} | null {
  if (l.maxTurns !== null && u.turns >= l.maxTurns) return {key: 'maxTurns', text: `max_turns (${l.maxTurns}) reached: ${u.turns} turns`}
  if (l.maxModelCalls !== null && u.modelCalls > l.maxModelCalls) return {key: 'maxModelCalls', text: `max_model_calls (${l.maxModelCalls}) exceeded: ${u.modelCalls} model calls`}
  if (l.maxCostUsd !== null && u.costUsd > l.maxCostUsd) return {key: 'maxCostUsd', text: `max_cost_usd (${l.maxCostUsd}) exceeded: $${u.costUsd}`}
  return null
}

const live = (a: AgentRecord) => !a.deletedAt && (a.phase === 'running' || a.phase === 'provisioning')

export function createBudgetEnforcer(store: Store, stop: Stop, logger: Deps['logger']) {
  // Stops under way in this process: two reports passing the same limit stop the subtree once.
  const stopping = new Set<string>()

  /** Stops `holder` (when live) and every live descendant, each with `detail`. */
  async function stopSubtree(holder: AgentRecord, members: AgentRecord[], detail: string): Promise<void> {
    const targets = members.filter((m) => live(m) && !stopping.has(m.id))
    for (const t of targets) stopping.add(t.id)
    try {
      // The holder first: it is the one that could create more.
      if (targets[0]?.id === holder.id) await stop(targets.shift()!, detail)
      await Promise.all(targets.map((t) => stop(t, detail)))
    } finally {
      for (const t of targets) stopping.delete(t.id)
    }
  }

  return {
    /**
     * Checks the agent's chain after its usage or turns changed (called once the write is
     * committed); stops the subtree of the highest agent over a limit. Never throws.
     */
    async check(agentId: string): Promise<void> {
      try {
        const agent = await store.agents.get(agentId)
        if (!agent) return
        let over: {holder: AgentRecord; members: AgentRecord[]; reason: {key: string; text: string}} | null = null
        for (const holder of [agent, ...(await ancestorsOf(store, agent))]) {
          const l = limitsOf(holder)
          if (!USAGE_KEYS.some((k) => l[k] !== null)) continue
          const {usage, members} = await subtreeUsage(store, holder)
          const reason = overLimit(l, usage)
          if (reason) over = {holder, members, reason}
        }
        if (!over) return
        const {holder, members, reason} = over
        const others = members.length - 1
        const by = others ? ` by ${holder.name} and its ${others} descendant${others === 1 ? '' : 's'}` : ''
        const detail = `${reason.text}${by} (limits.${reason.key} of agent ${holder.name}); ${holder.name}${others ? ' and its descendants were' : ' was'} stopped`
        logger.info({agentId: holder.id, reported: agentId, detail}, 'budget exceeded: stopping the subtree')
        await stopSubtree(holder, members, detail)
      } catch (err) {
        logger.warn({agentId, err: (err as Error).message}, 'checking the budgets of an agent\'s chain failed')
      }
    },

    /** The holder's own time ran out (its broker stopped it): its live descendants are stopped too. */
    async durationRanOut(holderId: string): Promise<void> {
      try {
        const holder = await store.agents.get(holderId)
        if (!holder) return
        const {members} = await subtreeUsage(store, holder)
        if (members.length < 2) return
        const l = limitsOf(holder)
        const detail = `max_duration${l.maxDurationSeconds !== null ? ` (${l.maxDurationSeconds}s)` : ''} ran out (limits.maxDurationSeconds of agent ${holder.name}); ${holder.name} and its descendants were stopped`
        await stopSubtree(holder, members.slice(1), detail)
      } catch (err) {
        logger.warn({agentId: holderId, err: (err as Error).message}, 'stopping the descendants of an agent out of time failed')
      }
    },
  }
}

export type BudgetEnforcer = ReturnType<typeof createBudgetEnforcer>
