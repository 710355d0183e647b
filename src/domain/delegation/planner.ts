import {createHash, hash} from 'node:crypto'
import type {Repos} from '../../store/store.js'
import type {EdgeFacts} from '../../store/repositories/delegation-edges.js'
import type {PlannerAgentFacts, PlannerFactsRow} from '../../store/repositories/agents.js'
import {classifyEdge, edgeFingerprint, parseCeiling} from './edge-class.js'
import {BACKFILL_SENTINEL, POLICY_V1, policyV1Ceiling} from './policy-v1.js'
import {MAX_WALK_DEPTH, type ExclusionReason, type Hop, type Outcome} from './types.js'

/** What the planner needs to know of one agent (deleted ones too: `parent_deleted`). */
export type AgentFacts = PlannerAgentFacts

export interface World {
  agents: Map<string, AgentFacts>
  /** Active edges by delegate agent ID (full EdgeRecords fit too; timestamps are never read). */
  activeEdges: Map<string, EdgeFacts[]>
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

/** Planner facts of one agent row with its raw config. */
export function agentFacts(r: PlannerFactsRow): AgentFacts {
  const createdBy = r.createdById ? {kind: r.createdByKind, id: r.createdById} : null
  return {id: r.id, projectId: r.projectId, createdBy, role: r.role, deleted: r.deleted, ...configFacts(r.config, r.role)}
}

/**
 * Loads everything the planner reads in bulk: lean columns, no timestamps. On SQLite agents and
 * active edges are read as value arrays with the config read by SQLite itself
 * (`listPlannerWorld`); elsewhere through the query builder with the config parsed here.
 */
export async function loadWorld(repos: Repos): Promise<World> {
  const bulk = await repos.agents.listPlannerWorld()
  const [facts, edges] = bulk ? [bulk.agents, bulk.edges] : await Promise.all([repos.agents.listPlannerFacts().then((rows) => rows.map(agentFacts)), repos.delegationEdges.listActiveFacts()])
  const users = await repos.users.statuses()
  const agents = new Map<string, AgentFacts>()
  for (const a of facts) agents.set(a.id, a)
  const activeEdges = new Map<string, EdgeFacts[]>()
  for (const e of edges) {
    const list = activeEdges.get(e.delegateAgentId)
    if (list) list.push(e)
    else activeEdges.set(e.delegateAgentId, [e])
  }
  return {agents, activeEdges, users}
}

/** Whether a decided hop excludes its children, and the ceiling it bounds them with (rule 3). */
const isExcluded = (h: PlannedHop) => h.outcome === 'excluded'
const childCeiling = (h: PlannedHop): readonly string[] | null => (h.outcome === 'adopt' ? h.afterCeiling : h.beforeCeiling)

/** One agent on the way up: its in-project edge (or why it has none) and the parent followed. */
interface Step {
  agent: AgentFacts
  edge: EdgeFacts | ExclusionReason
  /** The agent the edge names as delegator, when it names an agent that exists. */
  delegatorAgent: AgentFacts | undefined
  parent: AgentFacts | null
}

const TABLE_ROLES = new Set(Object.keys(POLICY_V1))
const SA_PERMISSIONS = ['cloud_service_account.assign', 'cloud_service_account.use']

/** The role rules in their order: `none` on either role, then an unknown one on either. */
function roleRule(edgeRole: string, appliedRole: string | null): ExclusionReason | null {
  if (edgeRole === 'none' || appliedRole === 'none') return 'role_none'
  if (!TABLE_ROLES.has(edgeRole) || (appliedRole !== null && !TABLE_ROLES.has(appliedRole))) return 'unknown_role'
  return null
}

/** The one in-project active edge of an agent, or the reason it has none. */
function edgeOf(world: World, a: AgentFacts): EdgeFacts | ExclusionReason {
  const all = world.activeEdges.get(a.id)
  if (!all || all.length === 0) return 'missing_edge'
  if (all.length === 1) return all[0].projectId === a.projectId ? all[0] : 'scope_mismatch'
  const inProject = all.filter((e) => e.projectId === a.projectId)
  if (inProject.length > 1) return 'duplicate_active_edges'
  return inProject.length === 0 ? 'scope_mismatch' : inProject[0]
}

/** The step of an agent: the agent delegator is followed when present, not deleted, same project. */
function stepOf(world: World, a: AgentFacts): Step {
  const edge = edgeOf(world, a)
  if (typeof edge === 'string' || edge.delegator.kind !== 'agent') return {agent: a, edge, delegatorAgent: undefined, parent: null}
  const p = world.agents.get(edge.delegator.id)
  return {agent: a, edge, delegatorAgent: p, parent: p && !p.deleted && p.projectId === a.projectId ? p : null}
}

/** Rules before the ancestor rule (scope, delegator type, root, parent); null when they pass. */
function pathRule(world: World, a: AgentFacts, e: EdgeFacts, p: AgentFacts | undefined): ExclusionReason | null {
  const d = e.delegator
  if (d.kind === 'agent') {
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

/**
 * Ceilings of one plan, interned: the few distinct ceilings a plan has are built once and
 * shared (frozen) by every hop that carries them. Each stored ceiling text is parsed once, each
 * V1 ceiling computed once per (edge role, applied role, rule 1, parent ceiling), and each
 * "above policy" verdict once per (ceiling, role, rule 1): a plan over 100k adopted edges sees a
 * handful of each.
 */
function ceilingCache() {
  const interned = new Map<string, readonly string[]>()
  const parsed = new Map<string, readonly string[] | null>()
  // Keyed by nested maps (no key string built per hop): parent ceiling → edge role → applied role → rule 1.
  const v1 = new Map<readonly string[] | null, Map<string, Map<string, Pair<readonly string[] | null>>>>()
  const above = new Map<readonly string[], Map<string, Pair<boolean>>>()
  const intern = (c: readonly string[]): readonly string[] => {
    const key = c.join(',')
    let hit = interned.get(key)
    if (!hit) interned.set(key, (hit = Object.freeze([...c])))
    return hit
  }
  return {
    /** `parseCeiling`, remembered per text; the array it gives is interned. */
    parse(raw: string | null): string[] | null {
      if (raw === null) return null
      let hit = parsed.get(raw)
      if (hit === undefined) {
        const c = parseCeiling(raw)
        parsed.set(raw, (hit = c && intern(c)))
      }
      return hit as string[] | null
    },
    policy(edgeRole: string, appliedRole: string, sa: boolean, parent: readonly string[] | null): readonly string[] | null {
      const bySa = within(within(within(v1, parent, newMap), edgeRole, newMap), appliedRole, newPair)
      const i = sa ? 1 : 0
      if (bySa[i] === undefined) {
        const c = policyV1Ceiling({edgeRole, appliedRole, assignModeServiceAccount: sa, parentCeiling: parent})
        bySa[i] = c && intern(c)
      }
      return bySa[i]!
    },
    /** A recognized ceiling holds IDs beyond the V1 row of the edge's role (plus rule 1 when the config has it). */
    abovePolicy(ceiling: readonly string[], edgeRole: string, sa: boolean): boolean {
      const bySa = within(within(above, ceiling, newMap), edgeRole, newPair)
      const i = sa ? 1 : 0
      if (bySa[i] === undefined) {
        const row = POLICY_V1[edgeRole] ?? []
        bySa[i] = ceiling.some((p) => !row.includes(p) && !(sa && SA_PERMISSIONS.includes(p)))
      }
      return bySa[i]!
    },
  }
}

/** Results for rule 1 off and on, each computed on first use. */
type Pair<T> = [T | undefined, T | undefined]
const newPair = <T>(): Pair<T> => [undefined, undefined]
const newMap = <K, V>() => new Map<K, V>()
/** The value under `key`, made and stored on first use. */
function within<K, V>(map: Map<K, V>, key: K, make: () => NoInfer<V>): V {
  let v = map.get(key)
  if (v === undefined) map.set(key, (v = make()))
  return v
}
type Ceilings = ReturnType<typeof ceilingCache>

/**
 * A planned hop. Its edge fingerprint is computed on first read and kept: a preview never shows
 * it and 100k SHA-256s are a tenth of a full preview, while the writes that need it (start-up
 * records, commits) read it. The edge and the depth are private (read through getters), so a
 * hop serialises as exactly the API's hop and a preview sends the planner's hops without a copy;
 * spreading a hop drops them too (read them explicitly).
 */
class PlannedHopOf implements PlannedHop {
  // Own fields are exactly the API's hop (CONTRACT.md "Hop"), in its order: a hop is sent as it is.
  readonly edgeId: string | null
  readonly agentId: string
  readonly projectId: string
  readonly outcome: Outcome
  readonly reason: ExclusionReason | null
  readonly delegator: {kind: string; id: string} | null
  readonly role: string | null
  readonly beforeCeiling: string[] | null
  afterCeiling: string[] | null = null
  recordId: string | null = null
  readonly #depth: number
  readonly #edge: EdgeFacts | null
  #fingerprint: string | null | undefined
  constructor(a: AgentFacts, edge: EdgeFacts | null, depth: number, outcome: Outcome, reason: ExclusionReason | null, before: string[] | null) {
    this.edgeId = edge ? edge.id : null
    this.agentId = a.id
    this.projectId = a.projectId
    this.outcome = outcome
    this.reason = reason
    this.delegator = edge ? edge.delegator : null
    this.role = edge ? edge.role : null
    this.beforeCeiling = before
    this.#depth = depth
    this.#edge = edge
  }
  get depth(): number {
    return this.#depth
  }
  get beforeFingerprint(): string | null {
    if (this.#fingerprint === undefined) this.#fingerprint = this.#edge ? edgeFingerprint(this.#edge) : null
    return this.#fingerprint
  }
}

function newHop(a: AgentFacts, e: EdgeFacts | null, depth: number, outcome: Outcome, reason: ExclusionReason | null, before: readonly string[] | null): PlannedHop {
  return new PlannedHopOf(a, e, depth, outcome, reason, before as string[] | null)
}

const excluded = (a: AgentFacts, e: EdgeFacts | null, depth: number, reason: ExclusionReason, before: readonly string[] | null = null): PlannedHop =>
  newHop(a, e, depth, 'excluded', reason, before)

/** Decides one hop whose followed parent (if any) is already decided. */
function decide(world: World, step: Step, parent: PlannedHop | null, ceilings: Ceilings): PlannedHop {
  const {agent: a, edge: e} = step
  if (typeof e === 'string') return excluded(a, null, 0, e)
  const depth = parent ? parent.depth + 1 : e.delegator.kind === 'agent' ? 1 : 0
  const c = classifyEdge(e, ceilings.parse)
  const before = c.kind === 'recorded' || c.kind === 'recognized' ? c.ceiling : null
  const path = pathRule(world, a, e, step.delegatorAgent)
  if (path) return excluded(a, e, depth, path, before)
  if (parent && isExcluded(parent)) return excluded(a, e, depth, 'ancestor_excluded', before)
  if (depth >= MAX_WALK_DEPTH) return excluded(a, e, depth, 'too_deep', before)
  if (a.createdBy && (a.createdBy.kind !== e.delegator.kind || a.createdBy.id !== e.delegator.id)) return excluded(a, e, depth, 'delegator_ancestry_mismatch', before)
  if (c.kind === 'unknown_version') return excluded(a, e, depth, 'unknown_provenance_version')
  if (c.kind === 'malformed_provenance' || c.kind === 'malformed_ceiling') return excluded(a, e, depth, c.kind)
  if (c.kind === 'recorded') return newHop(a, e, depth, 'recorded', null, before)
  if (c.kind === 'recognized') return newHop(a, e, depth, ceilings.abovePolicy(c.ceiling, e.role, a.assignModeServiceAccount) ? 'recognized_above_policy' : 'recognized', null, before)
  // Unrecorded: only now do the role and the config matter (they pick the V1 ceiling).
  const role = roleRule(e.role, a.appliedRole)
  if (role) return excluded(a, e, depth, role)
  if (!a.configReadable || a.appliedRole === null) return excluded(a, e, depth, 'unreadable_agent_config')
  const after = ceilings.policy(e.role, a.appliedRole, a.assignModeServiceAccount, parent ? childCeiling(parent) : null)
  if (!after) return excluded(a, e, depth, 'unknown_role')
  const hop = newHop(a, e, depth, 'adopt', null, null)
  hop.afterCeiling = after as string[]
  return hop
}

/**
 * Plans adoption over the ancestor closure of the live agents in scope (stopped agents are
 * live, deleted ones are not): one hop per examined edge, or per agent without exactly one
 * in-project active edge. Each agent is decided once (memoised): the walk goes up iteratively
 * until a decided agent, a root or a repeat, then decides top-down, so long chains and cycles
 * cost linear time and no recursion. Hops come sorted top-down (depth, then agent ID); their
 * ceilings are shared, frozen arrays. No timestamp is ever read.
 */
export function planAdoption(world: World, scope: PlanScope = {}): PlannedHop[] {
  const memo = new Map<string, PlannedHop>()
  const ceilings = ceilingCache()
  const stack: Step[] = []
  // Where an agent sits on the current walk: a scan while the walk is short (almost always; a
  // Map per walk costs more than the walk), an index once it grows long.
  let index: Map<string, number> | null = null
  const onStack = (id: string): number => {
    if (index) return index.get(id) ?? -1
    for (let i = 0; i < stack.length; i++) if (stack[i].agent.id === id) return i
    if (stack.length >= 16) index = new Map(stack.map((st, i) => [st.agent.id, i]))
    return -1
  }
  const resolve = (start: AgentFacts): void => {
    let cur: AgentFacts | null = start
    while (cur && !memo.has(cur.id)) {
      const at = onStack(cur.id)
      if (at >= 0) {
        // The chain repeats: every member of the loop is a `cycle` hop; those below follow it.
        for (const m of stack.slice(at)) memo.set(m.agent.id, excluded(m.agent, m.edge as EdgeFacts, 1, 'cycle'))
        stack.length = at
        break
      }
      const step = stepOf(world, cur)
      index?.set(cur.id, stack.length)
      stack.push(step)
      cur = step.parent
    }
    for (let i = stack.length - 1; i >= 0; i--) {
      const step = stack[i]
      memo.set(step.agent.id, decide(world, step, step.parent ? (memo.get(step.parent.id) ?? null) : null, ceilings))
    }
    stack.length = 0
    index = null
  }
  const inScope = (a: AgentFacts | undefined): a is AgentFacts => !!a && !a.deleted && (scope.projectId === undefined || a.projectId === scope.projectId)
  if (scope.agentIds) {
    for (const id of scope.agentIds) {
      const a = world.agents.get(id)
      if (inScope(a)) resolve(a)
    }
  } else for (const a of world.agents.values()) if (inScope(a)) resolve(a)
  // Top-down: by depth, then agent ID (the default string sort, cheaper than a comparator).
  const byDepth: string[][] = []
  for (const h of memo.values()) (byDepth[h.depth] ??= []).push(h.agentId)
  const hops: PlannedHop[] = []
  for (const ids of byDepth) if (ids) for (const id of ids.sort()) hops.push(memo.get(id)!)
  return hops
}

/**
 * Fingerprint of a plan: the operation and every hop's API fields, order-insensitive. Two
 * previews of the same state give the same value; any change of outcome, reason, edge, role or
 * ceiling changes it. No timestamp is part of it. `recordStatus` adds the status of each hop's
 * record: a revert reactivates the very row an adopt plan named, so only the record's status
 * tells a plan committed before the revert from a new one (SPEC "Commit effects" 5).
 *
 * A full preview fingerprints every live agent's hop, so this is built for 100k hops: the
 * distinct ceilings enter once, as the sorted list of their SHA-256s, and each hop names its
 * ceilings by their place in that list (the planner shares ceiling arrays, so each is hashed
 * once); the tuples are sorted field by field (a total order, so any order of the same hops
 * gives the same sequence) and serialised in one call.
 */
export function planFingerprint(operation: 'adopt' | 'revert', hops: Hop[], recordStatus?: (recordId: string) => string | undefined): string {
  const digestOf = new Map<readonly string[], string>()
  for (const h of hops) {
    for (const c of [h.beforeCeiling, h.afterCeiling]) if (c !== null && !digestOf.has(c)) digestOf.set(c, hash('sha256', JSON.stringify(c), 'hex'))
  }
  const digests = [...new Set(digestOf.values())].sort()
  const placeOfDigest = new Map(digests.map((d, i) => [d, i]))
  const place = new Map([...digestOf].map(([c, d]) => [c, placeOfDigest.get(d)!]))
  const tuples = hops.map((h) => {
    const t: Array<string | number | null> = [h.agentId, h.edgeId, h.projectId, h.outcome, h.reason, h.delegator?.kind ?? null, h.delegator?.id ?? null, h.role, h.beforeCeiling && place.get(h.beforeCeiling)!, h.afterCeiling && place.get(h.afterCeiling)!, h.recordId]
    if (recordStatus) t.push(h.recordId === null ? null : (recordStatus(h.recordId) ?? null))
    return t
  })
  tuples.sort(compareTuples)
  return createHash('sha256').update(JSON.stringify([operation, digests, tuples])).digest('hex')
}

/** Field by field; null sorts first. */
function compareTuples(x: Array<string | number | null>, y: Array<string | number | null>): number {
  for (let i = 0; i < x.length; i++) {
    const a = x[i]
    const b = y[i]
    if (a === b) continue
    if (a === null) return -1
    if (b === null) return 1
    return a < b ? -1 : 1
  }
  return 0
}
