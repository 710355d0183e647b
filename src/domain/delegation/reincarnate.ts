import {AppError} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {Store} from '../../store/store.js'
import type {CallContext} from '../authz/context.js'
import {recordDelegation} from './record-edge.js'
import {loadChain, reincarnationReRecords} from './walk.js'

/** Deactivation cause of the edge a reincarnation replaces. */
export const REINCARNATED_CAUSE = 'reincarnated'

/**
 * The edge side of a reincarnation (SPEC "Errors", denial details), in one transaction:
 * - a user keeping the role re-records the edge with the user as delegator when the agent's own
 *   edge is unrecorded, or an edge above is unrecorded and every edge between is accepted;
 *   otherwise the edge is kept;
 * - an agent (itself or another) keeps the edge, so the denial stays; it therefore may not change
 *   the role (the new role would need a new edge, delegated by that agent, which would clear the
 *   denial the spec says an agent's reincarnation keeps): refused, nothing changes;
 * - a user's role change records a new edge with the new role, delegated by the user.
 * A re-recorded agent's recorded creator becomes its new delegator, so record and edge agree.
 * Returns the agent as it now is; the caller restarts it for a fresh token.
 */
export async function reincarnateEdge(store: Store, ctx: CallContext, agent: AgentRecord, role: string | undefined, now: string): Promise<AgentRecord> {
  const p = ctx.principal
  if (p.kind === 'broker') throw new AppError('forbidden', 'brokers do not reincarnate agents')
  const roleChange = role !== undefined && role !== agent.role
  if (roleChange && p.kind === 'agent') {
    throw new AppError('forbidden', "an agent's reincarnation keeps the agent's delegation, so it cannot change the role; ask a user to reincarnate it with --role", {permission: 'agent.lifecycle', reason: 'agent_keeps_edge'})
  }
  return store.transaction(async (tx) => {
    const reRecord = roleChange || (p.kind === 'user' && reincarnationReRecords(await loadChain(tx, agent.id)))
    if (!reRecord) return agent
    await recordDelegation(tx, ctx, {id: agent.id, projectId: agent.projectId, role: role ?? agent.role}, now, REINCARNATED_CAUSE)
    return (await tx.agents.update(agent.id, {role: role ?? agent.role, createdBy: {kind: p.kind, id: p.id}}, now))!
  })
}
