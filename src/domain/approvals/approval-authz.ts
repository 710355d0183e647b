import type {Decision} from '../authz/decide.js'
import type {Principal} from '../authz/context.js'

/** What decides whether a caller may answer an agent's approval, gathered before the decision. */
export interface ApprovalDeciderFacts {
  principal: Pick<Principal, 'kind' | 'id'>
  agent: {id: string; parentId: string | null}
  /** The caller is a person who owns the agent (agents/access.ts `ownsAgent`). */
  owner: boolean
  /** The caller is a person holding `agent.lifecycle` in the agent's project. */
  lifecycle: boolean
}

/**
 * Pure decision: who may answer an agent's permission request (CONTRACT "Approvals"). A person
 * who owns the agent or holds `agent.lifecycle` in its project; the agent's parent agent (its
 * team lead); never the agent itself, whatever its token holds (it would approve its own tool
 * calls); no other agent (a sibling or grandparent included) and no broker.
 */
export function decideApprover(f: ApprovalDeciderFacts): Decision {
  const p = f.principal
  if (p.kind === 'agent') {
    if (p.id === f.agent.id) return {allowed: false, reason: 'own_approval'}
    if (f.agent.parentId !== null && p.id === f.agent.parentId) return {allowed: true, reason: 'parent_agent'}
    return {allowed: false, reason: 'not_the_parent'}
  }
  if (p.kind !== 'user') return {allowed: false, reason: 'principal_not_user'}
  if (f.owner) return {allowed: true, reason: 'owner'}
  if (f.lifecycle) return {allowed: true, reason: 'lifecycle'}
  return {allowed: false, reason: 'neither_owner_nor_lifecycle'}
}

/**
 * Pure decision: whether a caller that may read an agent also sees its approvals. An approval's
 * `input` is the tool's command and arguments (tokens, URLs with credentials, ...): persons who
 * read the agent see it, and of agents only the agent itself and its parent (which decides it).
 * Any other agent of the project (a sibling, an unrelated one) reads the agent but none of its
 * approvals. Brokers never read approvals.
 */
export function seesApprovalsOf(principal: Pick<Principal, 'kind' | 'id'>, agent: {id: string; parentId: string | null}): boolean {
  if (principal.kind === 'user') return true
  if (principal.kind !== 'agent') return false
  return principal.id === agent.id || (agent.parentId !== null && principal.id === agent.parentId)
}
