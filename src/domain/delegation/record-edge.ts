import type {Repos} from '../../store/store.js'
import type {NewEdge} from '../../store/repositories/delegation-edges.js'
import type {CallContext} from '../authz/context.js'
import {newId} from '../shared/secrets.js'
import {classifyEdge} from './edge-class.js'
import {CURRENT_PROVENANCE_VERSION} from './policy-v1.js'
import {ROLE_SCOPES} from './role-scopes.js'

/**
 * The delegator's own ceiling, or null when nothing bounds it: a user on a session or the dev
 * credential delegates whatever the role holds; a user access token bounds it by the token's
 * permissions; an agent by its active edge's recorded or adopted ceiling. An agent whose own
 * edge is unrecorded has no ceiling to bound with; the walk still denies the provenance-
 * requiring permissions above it, so the child gains nothing the chain does not allow.
 */
async function delegatorCeiling(tx: Repos, ctx: CallContext): Promise<ReadonlySet<string> | null> {
  const p = ctx.principal
  if (p.kind === 'user') return ctx.bounds ? ctx.bounds.permissions : null
  if (p.kind !== 'agent') return new Set()
  // Its one active edge in its own project, as the walk and the planner read it.
  const active = (await tx.delegationEdges.activeFor(p.id)).filter((e) => e.projectId === p.projectId)
  if (active.length !== 1) return new Set()
  const c = classifyEdge(active[0])
  return c.kind === 'recorded' || c.kind === 'recognized' ? new Set(c.ceiling) : c.kind === 'unrecorded' ? null : new Set()
}

/** The ceiling a new edge of `role` gets under a delegator bounded by `bound` (sorted). */
export function creationCeiling(role: string, bound: ReadonlySet<string> | null): string[] {
  const scopes = [...(ROLE_SCOPES[role] ?? [])]
  return (bound ? scopes.filter((p) => bound.has(p)) : scopes).sort()
}

/**
 * Records the delegation edge of a new agent inside the creating transaction: the creating
 * user or agent as delegator, the role, the current provenance version, the credential kind of
 * the request, and the ceiling. Any other active edge of the agent is deactivated first, so an
 * agent always has exactly one.
 */
export async function recordDelegation(
  tx: Repos,
  ctx: CallContext,
  agent: {id: string; projectId: string; role: string},
  now: string,
  cause: string | null = null,
): Promise<NewEdge> {
  const p = ctx.principal
  const edge: NewEdge = {
    id: newId(),
    delegateAgentId: agent.id,
    projectId: agent.projectId,
    delegator: {kind: p.kind, id: p.id},
    role: agent.role,
    provenanceVersion: CURRENT_PROVENANCE_VERSION,
    sourceCredentialKind: ctx.credentialKind,
    ceiling: JSON.stringify(creationCeiling(agent.role, await delegatorCeiling(tx, ctx))),
    ceilingPolicy: null,
    ceilingProjectId: null,
    initiator: null,
    createdAt: now,
  }
  for (const old of await tx.delegationEdges.activeFor(agent.id)) await tx.delegationEdges.deactivate(old.id, cause, now)
  await tx.delegationEdges.insert(edge)
  return edge
}
