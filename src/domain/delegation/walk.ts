import type {Repos} from '../../store/store.js'
import type {EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {classifyEdge, type EdgeClass} from './edge-class.js'
import {BACKFILL_SENTINEL, POLICY_V1} from './policy-v1.js'
import {PROVENANCE_REQUIRED, ROLE_SCOPES} from './role-scopes.js'
import {MAX_WALK_DEPTH, UNRECORDED_DENIAL, type ExclusionReason} from './types.js'

/**
 * Why a chain cannot be walked at all, whatever the permission: the planner's structural
 * exclusion reasons (same names, same meaning), plus the agent itself missing or deleted.
 */
export type ChainBreak =
  | 'agent_missing'
  | 'agent_deleted'
  | Extract<ExclusionReason, 'missing_edge' | 'duplicate_active_edges' | 'scope_mismatch' | 'unsupported_delegator_type' | 'no_principal_root' | 'root_missing' | 'root_inactive' | 'parent_missing' | 'parent_deleted' | 'cycle' | 'too_deep'>

/** One edge of the chain: hop 0 is the agent's own edge, the last one names the root user. */
export interface WalkHop {
  /** The agent this edge delegates to: logged at debug level, never returned to a caller. */
  delegate: string
  cls: EdgeClass
}

export interface Chain {
  agentId: string
  /** The agent's own role: its role scopes bound every permission. */
  role: string
  hops: WalkHop[]
  /** Set when the chain is broken; `hops` then holds the hops read before the break. */
  broken: ChainBreak | null
}

/**
 * Permissions some adopted ceiling can carry: the V1 rows (rule 1's two service-account IDs are
 * in the full row already). Adoption can never lift the denial of anything else, such as
 * `agent.identity_token` (rule 4) or the artifact permissions, so those denials carry no
 * remediation keys (SPEC "Errors", denial details).
 */
const ADOPTABLE: ReadonlySet<string> = new Set(Object.values(POLICY_V1).flat())

export interface WalkDecision {
  allowed: boolean
  reason: string
  /** The spec's denial details; only ever the three UNRECORDED_DENIAL keys. */
  details?: Record<string, string>
  /** Delegates of the unrecorded hops that caused the denial, for the debug log only. */
  unrecordedDelegates?: string[]
}

/**
 * Pure decision: may the agent at the bottom of `chain` use `permission`?
 * 1. A broken chain denies everything (reason: the break).
 * 2. The agent's role scopes must hold the permission.
 * 3. Every hop: a recorded or recognized hop must carry it in its ceiling; an unrecorded
 *    (version-0) hop denies the provenance-requiring permissions and nothing else; a hop of an
 *    unsupported version or a malformed row denies everything (it cannot be read, so it bounds
 *    nothing safely).
 * The remediation details are added only when unrecorded hops are the whole cause and an
 * adopted ceiling can carry the permission: any other cause (role, a ceiling that lacks it, an
 * unsupported hop) keeps the plain denial, because adoption or reincarnation would not lift it,
 * and so does a permission no adopted ceiling carries (`agent.identity_token`).
 */
export function decideWalk(chain: Chain, permission: string): WalkDecision {
  if (chain.broken) return {allowed: false, reason: chain.broken}
  if (!ROLE_SCOPES[chain.role]?.has(permission as never)) return {allowed: false, reason: 'role_lacks_permission'}
  let plain: string | null = null
  const unrecorded: string[] = []
  for (const hop of chain.hops) {
    const c = hop.cls
    if (c.kind === 'recorded' || c.kind === 'recognized') {
      if (!c.ceiling.includes(permission)) plain ??= 'ceiling_lacks_permission'
    } else if (c.kind === 'unrecorded') {
      if (PROVENANCE_REQUIRED.has(permission as never)) unrecorded.push(hop.delegate)
    } else {
      plain ??= c.kind === 'unknown_version' ? 'unsupported_provenance_version' : c.kind
    }
  }
  if (plain) return {allowed: false, reason: plain}
  if (unrecorded.length) {
    return {allowed: false, reason: 'ceiling_unrecorded', ...(ADOPTABLE.has(permission) && {details: {...UNRECORDED_DENIAL}}), unrecordedDelegates: unrecorded}
  }
  return {allowed: true, reason: 'chain'}
}

/**
 * Reads an agent's chain up to its root user: the recursive edge query, then the root user.
 * Three queries whatever the depth; nothing is cached, so a deactivated edge, a deleted
 * ancestor or a suspended root user denies the very next check, on every replica.
 */
export async function loadChain(repos: Pick<Repos, 'delegationEdges' | 'users'>, agentId: string): Promise<Chain> {
  const {edges, agents} = await repos.delegationEdges.activeChain(agentId, MAX_WALK_DEPTH + 1)
  const agentById = new Map(agents.map((a) => [a.id, a]))
  const activeOf = new Map<string, EdgeRecord[]>()
  for (const e of edges) activeOf.set(e.delegateAgentId, [...(activeOf.get(e.delegateAgentId) ?? []), e])
  const self = agentById.get(agentId)
  const chain: Chain = {agentId, role: self?.role ?? 'none', hops: [], broken: null}
  const stop = (b: ChainBreak) => ({...chain, broken: b})
  if (!self) return stop('agent_missing')
  if (self.deleted) return stop('agent_deleted')
  const seen = new Set<string>()
  let current = self
  for (;;) {
    if (seen.has(current.id)) return stop('cycle')
    if (chain.hops.length >= MAX_WALK_DEPTH) return stop('too_deep')
    seen.add(current.id)
    // As the planner reads it: the one active edge in the agent's project; edges scoped to another
    // project neither count as duplicates nor stand in for it.
    const active = activeOf.get(current.id) ?? []
    if (active.length === 0) return stop('missing_edge')
    const inProject = active.filter((e) => e.projectId === current.projectId)
    if (inProject.length > 1) return stop('duplicate_active_edges')
    if (inProject.length === 0 || current.projectId !== self.projectId) return stop('scope_mismatch')
    const edge = inProject[0]
    chain.hops.push({delegate: current.id, cls: classifyEdge(edge)})
    const d = edge.delegator
    if (d.kind === 'user') {
      if (d.id === BACKFILL_SENTINEL.id) return stop('no_principal_root')
      const user = await repos.users.get(d.id)
      if (!user) return stop('root_missing')
      if (user.status !== 'active') return stop('root_inactive')
      return chain
    }
    if (d.kind !== 'agent') return stop('unsupported_delegator_type')
    const parent = agentById.get(d.id)
    if (!parent) return stop('parent_missing')
    if (parent.deleted) return stop('parent_deleted')
    current = parent
  }
}

/**
 * For reincarnation: does a user's reincarnation re-record this agent's edge? Yes when its own
 * edge is unrecorded, or an edge above is unrecorded and every edge between is accepted on this
 * Hub (recorded or recognized). A break below that unrecorded hop, or an unsupported hop, says
 * no: re-recording would not make the chain walkable.
 */
export function reincarnationReRecords(chain: Chain): boolean {
  for (const hop of chain.hops) {
    if (hop.cls.kind === 'unrecorded') return true
    if (hop.cls.kind !== 'recorded' && hop.cls.kind !== 'recognized') return false
  }
  return false
}
