import {createHash} from 'node:crypto'
import type {Repos} from '../../store/store.js'
import type {EdgeFacts} from '../../store/repositories/delegation-edges.js'
import type {PlannerAgentFacts} from '../../store/repositories/agents.js'
import {classifyEdge, edgeFingerprint, parseCeiling} from './edge-class.js'
import {sortByAgentId} from './hop-order.js'
import type {KeptHops} from './kept-hops.js'
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

/**
 * Loads everything the planner reads in bulk: lean columns, no timestamps, the config's facts
 * from their columns. On SQLite agents and active edges are read as value arrays
 * (`listPlannerWorld`); elsewhere through the query builder.
 */
export async function loadWorld(repos: Repos): Promise<World> {
  const bulk = await repos.agents.listPlannerWorld()
  const [facts, edges] = bulk ? [bulk.agents, bulk.edges] : await Promise.all([repos.agents.listPlannerAgents(), repos.delegationEdges.listActiveFacts()])
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
 * The ceilings one plan builds, kept for many plans: a start-up pass plans each hop's chain on
 * its own (100k small plans) and would otherwise parse the same ceiling texts and compute the
 * same V1 ceilings once per hop. Everything in it is a pure function of its keys.
 */
export type PlanCache = Ceilings
export const newPlanCache = (): PlanCache => ceilingCache()

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
 * ceilings are shared, frozen arrays. No timestamp is ever read. `ceilings` may be kept from an
 * earlier plan (newPlanCache); `kept`, hops decided by earlier plans of a start-up pass
 * (kept-hops.ts): a plan stops at a kept hop as at one it decided, and keeps what it decides.
 */
export function planAdoption(world: World, scope: PlanScope = {}, ceilings: PlanCache = ceilingCache(), kept?: KeptHops<PlannedHop>): PlannedHop[] {
  const memo = new Map<string, PlannedHop>()
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
      const k = kept?.hops.get(cur.id)
      if (k) {
        memo.set(cur.id, k)
        // A kept hop ends the walk, but the agent planned for also needs its parent's hop (the verdict reads both).
        if (cur !== start) break
        cur = stepOf(world, cur).parent
        continue
      }
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
      const h = decide(world, step, step.parent ? (memo.get(step.parent.id) ?? null) : null, ceilings)
      memo.set(step.agent.id, h)
      if (kept) {
        kept.hops.set(step.agent.id, h)
        if (step.parent) within(kept.children, step.parent.id, () => [] as string[]).push(step.agent.id)
      }
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
  // Top-down: by depth, then agent ID.
  const byDepth: PlannedHop[][] = []
  for (const h of memo.values()) (byDepth[h.depth] ??= []).push(h)
  const hops: PlannedHop[] = []
  for (const level of byDepth) if (level) for (const h of sortByAgentId(level)) hops.push(h)
  return hops
}

/** `<n>:` for the lengths IDs and names have, made once. */
const LENGTH_PREFIX = Array.from({length: 256}, (_, i) => `${i}:`)

/**
 * Fingerprint of a plan: the operation and every hop's API fields, in the order given. The
 * planner gives hops in an order that is a function of the state (top-down by depth, then agent
 * ID), so two previews of the same state give the same value; any change of outcome, reason,
 * edge, role or ceiling changes it. No timestamp is part of it. `recordStatus` adds the status
 * of each hop's record: a revert reactivates the very row an adopt plan named, so only the
 * record's status tells a plan committed before the revert from a new one (SPEC "Commit
 * effects" 5).
 *
 * A full preview fingerprints every live agent's hop, so this is built for 100k hops: each
 * distinct ceiling enters once, in order of first use, and hops name it by its place (the
 * planner shares ceiling arrays, so a hop costs a map lookup, not a copy of its ceiling). Each
 * hop is one line of length-prefixed fields (`<length>:<text>`, `-` for null: unambiguous
 * without escaping any text), hashed 64 KiB at a time: no array per hop and no JSON of the
 * whole plan. No sort: the order is already canonical.
 */
export function planFingerprint(operation: 'adopt' | 'revert', hops: readonly Hop[], recordStatus?: (recordId: string) => string | undefined): string {
  const ceilings: Array<readonly string[]> = []
  const byArray = new Map<readonly string[], string>()
  const byContent = new Map<string, string>()
  /** The ceiling's place in `ceilings`, as text. */
  const place = (c: readonly string[] | null): string => {
    if (c === null) return '-'
    let i = byArray.get(c)
    if (i === undefined) {
      // An equal ceiling in another array (hops not built by the planner) takes the same place.
      const text = JSON.stringify(c)
      i = byContent.get(text)
      if (i === undefined) byContent.set(text, (i = String(ceilings.push(c) - 1)))
      byArray.set(c, i)
    }
    return i
  }
  const f = (s: string | null): string => (s === null ? '-' : (LENGTH_PREFIX[s.length] ?? `${s.length}:`) + s)
  // Fields with few distinct values (project, outcome, reason, kind, role, status) are framed once
  // each: fewer short-lived strings per hop (the plan has 100k).
  const framed = new Map<string, string>()
  const few = (s: string | null): string => {
    if (s === null) return '-'
    let x = framed.get(s)
    if (x === undefined) framed.set(s, (x = f(s)))
    return x
  }
  // UTF-16 code units as they are: the length prefixes count those, and no text is lost in encoding.
  const hash = createHash('sha256').update(f(operation), 'utf16le')
  let chunk = ''
  for (const h of hops) {
    let line = '\n' + f(h.agentId) + f(h.edgeId) + few(h.projectId) + few(h.outcome) + few(h.reason) + few(h.delegator?.kind ?? null) + f(h.delegator?.id ?? null) + few(h.role) + place(h.beforeCeiling) + ',' + place(h.afterCeiling) + ',' + f(h.recordId)
    if (recordStatus) line += few(h.recordId === null ? null : (recordStatus(h.recordId) ?? null))
    chunk += line
    if (chunk.length >= 65_536) {
      hash.update(chunk, 'utf16le')
      chunk = ''
    }
  }
  // The ceilings last, once each, in the order the hops named them.
  return hash.update(`${chunk}\n${JSON.stringify(ceilings)}`, 'utf16le').digest('hex')
}
