import {createHash} from 'node:crypto'
import type {Repos} from '../../store/store.js'
import type {EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {classifyEdge, edgeFingerprint} from './edge-class.js'
import {BACKFILL_SENTINEL, POLICY_V1, policyV1Ceiling} from './policy-v1.js'
import {MAX_WALK_DEPTH, type ExclusionReason, type Hop} from './types.js'

/** What the planner needs to know of one agent (deleted ones too: `parent_deleted`). */
export interface AgentFacts {
  id: string
  projectId: string
  /** The recorded creator; null when the row names none. */
  createdBy: {kind: string; id: string} | null
  role: string
  /** `config.applied.defaultAgentRole.value`, else the agent's role; null when the config is unreadable. */
  appliedRole: string | null
  /** Rule 1: the applied config has `defaultCloudIdentityMode` Assign with a service account ID. */
  assignModeServiceAccount: boolean
  configReadable: boolean
  deleted: boolean
}

export interface World {
  agents: Map<string, AgentFacts>
  /** Active edges by delegate agent ID. */
  activeEdges: Map<string, EdgeRecord[]>
  users: Map<string, {status: string}>
}

/** A planned hop; depth 0 = delegated by a user (top-down order for adoption). */
export interface PlannedHop extends Hop {
  depth: number
  beforeFingerprint: string | null
}

export interface PlanScope {
  projectId?: string
  agentIds?: string[]
}

type Applied = Record<string, {value?: unknown} | undefined>

/** Reads the facts of an agent's raw config text; an unparsable or non-object config is unreadable. */
export function configFacts(raw: string, role: string): Pick<AgentFacts, 'appliedRole' | 'assignModeServiceAccount' | 'configReadable'> {
  let config: unknown
  try {
    config = JSON.parse(raw)
  } catch {
    return {appliedRole: null, assignModeServiceAccount: false, configReadable: false}
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) return {appliedRole: null, assignModeServiceAccount: false, configReadable: false}
  const applied = (config as {applied?: unknown}).applied
  if (applied !== undefined && (!applied || typeof applied !== 'object' || Array.isArray(applied))) return {appliedRole: null, assignModeServiceAccount: false, configReadable: false}
  const a = (applied ?? {}) as Applied
  const appliedRole = a.defaultAgentRole?.value
  const account = a.defaultCloudIdentityServiceAccountId?.value
  return {
    appliedRole: typeof appliedRole === 'string' ? appliedRole : role,
    assignModeServiceAccount: a.defaultCloudIdentityMode?.value === 'Assign' && typeof account === 'string' && account !== '',
    configReadable: true,
  }
}

/** Loads everything the planner reads in three bulk queries (lean columns). */
export async function loadWorld(repos: Repos): Promise<World> {
  const [agentRows, edges, users] = await Promise.all([repos.agents.listPlannerFacts(), repos.delegationEdges.listActive(), repos.users.statuses()])
  const agents = new Map<string, AgentFacts>()
  for (const r of agentRows) {
    agents.set(r.id, {
      id: r.id,
      projectId: r.projectId,
      createdBy: r.createdById ? {kind: r.createdByKind, id: r.createdById} : null,
      role: r.role,
      deleted: r.deleted,
      ...configFacts(r.config, r.role),
    })
  }
  const activeEdges = new Map<string, EdgeRecord[]>()
  for (const e of edges) {
    const list = activeEdges.get(e.delegateAgentId)
    if (list) list.push(e)
    else activeEdges.set(e.delegateAgentId, [e])
  }
  return {agents, activeEdges, users}
}

/** A decided hop plus what its children need: whether it is excluded and the ceiling it bounds them with. */
interface Verdict {
  hop: PlannedHop
  excluded: boolean
  childCeiling: string[] | null
}

const TABLE_ROLES = new Set(Object.keys(POLICY_V1))

function roleRule(role: string | null): ExclusionReason | null {
  if (role === 'none') return 'role_none'
  if (role !== null && !TABLE_ROLES.has(role)) return 'unknown_role'
  return null
}

/** The one in-project active edge of an agent, or the reason it has none. */
function edgeOf(world: World, a: AgentFacts): EdgeRecord | ExclusionReason {
  const all = world.activeEdges.get(a.id) ?? []
  if (all.length === 0) return 'missing_edge'
  const inProject = all.filter((e) => e.projectId === a.projectId)
  if (inProject.length > 1) return 'duplicate_active_edges'
  if (inProject.length === 0) return 'scope_mismatch'
  return inProject[0]
}

/** The agent delegator the planner follows upwards: present, not deleted, same project. */
function followedParent(world: World, a: AgentFacts): AgentFacts | null {
  const e = edgeOf(world, a)
  if (typeof e === 'string' || e.delegator.kind !== 'agent') return null
  const p = world.agents.get(e.delegator.id)
  return p && !p.deleted && p.projectId === a.projectId ? p : null
}

function baseHop(a: AgentFacts, e: EdgeRecord | null, depth: number): PlannedHop {
  const c = e ? classifyEdge(e) : null
  return {
    edgeId: e?.id ?? null,
    agentId: a.id,
    projectId: a.projectId,
    outcome: 'excluded',
    reason: null,
    delegator: e ? {...e.delegator} : null,
    role: e?.role ?? null,
    beforeCeiling: c && (c.kind === 'recorded' || c.kind === 'recognized') ? c.ceiling : null,
    afterCeiling: null,
    recordId: null,
    depth,
    beforeFingerprint: e ? edgeFingerprint(e) : null,
  }
}

const exclude = (hop: PlannedHop, reason: ExclusionReason): Verdict => ({hop: {...hop, outcome: 'excluded', reason}, excluded: true, childCeiling: null})

/** Rules before the ancestor rule (scope, delegator type, root, parent); null when they pass. */
function pathRule(world: World, a: AgentFacts, e: EdgeRecord): ExclusionReason | null {
  const d = e.delegator
  if (d.kind === 'agent') {
    const p = world.agents.get(d.id)
    if (p && p.projectId !== a.projectId) return 'scope_mismatch'
    if (!p) return 'parent_missing'
    if (p.deleted) return 'parent_deleted'
    return null
  }
  if (d.kind !== 'user') return 'unsupported_delegator_type'
  if (d.id === BACKFILL_SENTINEL.id) return 'no_principal_root'
  const u = world.users.get(d.id)
  if (!u) return 'root_missing'
  if (u.status !== 'active') return 'root_inactive'
  return null
}

/** Decides one hop whose parent (if followed) is already decided. */
function decide(world: World, a: AgentFacts, parent: Verdict | null): Verdict {
  const e = edgeOf(world, a)
  if (typeof e === 'string') return exclude(baseHop(a, null, 0), e)
  const depth = parent ? parent.hop.depth + 1 : e.delegator.kind === 'agent' ? 1 : 0
  const hop = baseHop(a, e, depth)
  const path = pathRule(world, a, e)
  if (path) return exclude(hop, path)
  if (parent?.excluded) return exclude(hop, 'ancestor_excluded')
  if (depth >= MAX_WALK_DEPTH) return exclude(hop, 'too_deep')
  if (a.createdBy && (a.createdBy.kind !== e.delegator.kind || a.createdBy.id !== e.delegator.id)) return exclude(hop, 'delegator_ancestry_mismatch')
  const c = classifyEdge(e)
  if (c.kind === 'unknown_version') return exclude(hop, 'unknown_provenance_version')
  if (c.kind === 'malformed_provenance' || c.kind === 'malformed_ceiling') return exclude(hop, c.kind)
  if (c.kind === 'recorded') return {hop: {...hop, outcome: 'recorded'}, excluded: false, childCeiling: c.ceiling}
  if (c.kind === 'recognized') {
    // Above policy: IDs beyond the V1 row of the edge's role (plus rule 1 when the config has it).
    const allowed = new Set(POLICY_V1[e.role] ?? [])
    if (a.assignModeServiceAccount) for (const p of ['cloud_service_account.assign', 'cloud_service_account.use']) allowed.add(p)
    const above = c.ceiling.some((p) => !allowed.has(p))
    return {hop: {...hop, outcome: above ? 'recognized_above_policy' : 'recognized'}, excluded: false, childCeiling: c.ceiling}
  }
  // Unrecorded: only now do the role and the config matter (they pick the V1 ceiling).
  const role = roleRule(e.role) ?? roleRule(a.appliedRole)
  if (role) return exclude(hop, role)
  if (!a.configReadable || a.appliedRole === null) return exclude(hop, 'unreadable_agent_config')
  const after = policyV1Ceiling({edgeRole: e.role, appliedRole: a.appliedRole, assignModeServiceAccount: a.assignModeServiceAccount, parentCeiling: parent ? parent.childCeiling : null})
  if (!after) return exclude(hop, 'unknown_role')
  return {hop: {...hop, outcome: 'adopt', afterCeiling: after}, excluded: false, childCeiling: after}
}

/**
 * Plans adoption over the ancestor closure of the live agents in scope (stopped agents are
 * live, deleted ones are not): one hop per examined edge, or per agent without exactly one
 * in-project active edge. Each agent is decided once (memoised), walking up iteratively and
 * deciding top-down, so long chains and cycles cost linear time and no recursion. Hops come
 * sorted top-down (depth, then agent ID). No timestamp is ever read.
 */
export function planAdoption(world: World, scope: PlanScope = {}): PlannedHop[] {
  const memo = new Map<string, Verdict>()
  const wanted = scope.agentIds ? new Set(scope.agentIds) : null
  const resolve = (start: AgentFacts): void => {
    const stack: AgentFacts[] = []
    const onStack = new Map<string, number>()
    let cur: AgentFacts | null = start
    while (cur && !memo.has(cur.id)) {
      const at = onStack.get(cur.id)
      if (at !== undefined) {
        // The chain repeats: every member of the loop is a `cycle` hop; those below follow it.
        for (const m of stack.slice(at)) {
          const e = edgeOf(world, m) as EdgeRecord
          memo.set(m.id, exclude(baseHop(m, e, 1), 'cycle'))
        }
        stack.length = at
        break
      }
      onStack.set(cur.id, stack.length)
      stack.push(cur)
      cur = followedParent(world, cur)
    }
    for (let i = stack.length - 1; i >= 0; i--) {
      const a = stack[i]
      const p = followedParent(world, a)
      memo.set(a.id, decide(world, a, p ? (memo.get(p.id) ?? null) : null))
    }
  }
  for (const a of world.agents.values()) {
    if (a.deleted || (scope.projectId !== undefined && a.projectId !== scope.projectId) || (wanted && !wanted.has(a.id))) continue
    resolve(a)
  }
  const hops = [...memo.values()].map((v) => v.hop)
  return hops.sort((x, y) => x.depth - y.depth || (x.agentId < y.agentId ? -1 : x.agentId > y.agentId ? 1 : 0))
}

/**
 * Fingerprint of a plan: the operation and every hop's API fields, order-insensitive. Two
 * previews of the same state give the same value; any change of outcome, reason, edge, role or
 * ceiling changes it. No timestamp is part of it.
 */
export function planFingerprint(operation: 'adopt' | 'revert', hops: Hop[]): string {
  const rows = hops.map((h) => JSON.stringify([h.agentId, h.edgeId, h.projectId, h.outcome, h.reason, h.delegator?.kind ?? null, h.delegator?.id ?? null, h.role, h.beforeCeiling, h.afterCeiling, h.recordId]))
  rows.sort()
  return createHash('sha256').update(JSON.stringify([operation, rows])).digest('hex')
}
