import {notFound} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {CallContext} from '../authz/context.js'
import {decideAttachReach, type AgentLineage, type AttachAction} from '../authz/attach-authority.js'
import type {Deps} from '../deps.js'

export type {AttachAction}

// Far deeper than any real team; bounds the walk should a record ever point in a circle.
const MAX_HOPS = 64

/**
 * The agents that created `agent`, nearest first, read from the records (`createdBy` of kind
 * agent: an agent created with an agent's credential is that agent's child). Deleted ancestors
 * still count: a grandparent keeps its reach over a grandchild whose parent was deleted.
 * Stops early at `stopAt` (the caller): the rest of the chain cannot change the decision.
 */
export async function lineageOf(store: Deps['store'], agent: AgentRecord, stopAt?: string): Promise<AgentLineage> {
  const ancestors: string[] = []
  let by = agent.createdBy
  while (by.kind === 'agent' && ancestors.length < MAX_HOPS && !ancestors.includes(by.id)) {
    ancestors.push(by.id)
    if (by.id === stopAt) break
    const parent = await store.agents.get(by.id)
    if (!parent) break
    by = parent.createdBy
  }
  return {id: agent.id, projectId: agent.projectId, ancestors}
}

/**
 * The one enforcement point of live attach authority (keys, attach, logs and their follow
 * stream): an agent that may not reach `agent` gets 404 `not_found`, as if it did not exist.
 * Users and brokers pass (their own rules follow). Call it after the target is resolved and the
 * cross-project rules have run, and before any permission check, so a non-descendant answers
 * exactly like a missing agent.
 */
export async function requireAttachReach(store: Deps['store'], ctx: CallContext, agent: AgentRecord, action: AttachAction): Promise<void> {
  const p = ctx.principal
  if (p.kind !== 'agent') return
  const lineage = p.id === agent.id ? {id: agent.id, projectId: agent.projectId, ancestors: []} : await lineageOf(store, agent, p.id)
  if (!decideAttachReach(p, action, lineage).allowed) throw notFound('agent')
}
