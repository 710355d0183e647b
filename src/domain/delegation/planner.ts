import {createHash} from 'node:crypto'
import type {EdgeFacts} from '../../store/repositories/delegation-edges.js'
import {classifyEdge, edgeFingerprint} from './edge-class.js'
import {sortByAgentId} from './hop-order.js'
import type {KeptHops} from './kept-hops.js'
import {indexedWorld, type AgentFacts, type IndexedWorld, type World} from './plan-world.js'
import {BACKFILL_SENTINEL, POLICY_V1} from './policy-v1.js'
import {ceilingCache, within, type Ceilings} from './plan-ceilings.js'
import {MAX_WALK_DEPTH, type ExclusionReason, type Hop, type Outcome} from './types.js'

export {loadWorld, type AgentFacts, type World} from './plan-world.js'

/** A planned hop; depth 0 = delegated by a user (top-down order for adoption). */
export interface PlannedHop extends Hop {
  depth: number
  beforeFingerprint: string | null
}

export interface PlanScope {
  projectId?: string
  agentIds?: string[]
}

/** Whether a decided hop excludes its children, and the ceiling it bounds them with (rule 3). */
const isExcluded = (h: PlannedHop) => h.outcome === 'excluded'
const childCeiling = (h: PlannedHop): readonly string[] | null => (h.outcome === 'adopt' ? h.afterCeiling : h.beforeCeiling)

/** One agent on the way up: its in-project edge (or why it has none) and the parent followed. */
interface Step {
  node: number
  agent: AgentFacts
  edge: EdgeFacts | ExclusionReason
  /** The agent the edge names as delegator, when it names an agent that exists. */
  delegatorAgent: AgentFacts | undefined
  /** The parent's node; -1 for none. */
  parent: number
}

/**
 * The agents one plan walks, by number: the dense numbers of a world read from the store
 * (plan-world.ts), or, for a world of maps, numbered as the plan meets them. A plan keeps its
 * hops and its walk by these numbers, in arrays.
 */
interface Graph {
  agent: AgentFacts[]
  /** The number of the agent with this ID; -1 when there is none. */
  node(id: string): number
  edges(n: number): readonly EdgeFacts[] | undefined
}

function indexedGraph(x: IndexedWorld): Graph {
  return {agent: x.agents as AgentFacts[], node: (id) => x.index.get(id) ?? -1, edges: (n) => x.edges[n]}
}

function mapGraph(world: World): Graph {
  const agent: AgentFacts[] = []
  const numbered = new Map<string, number>()
  return {
    agent,
    node(id) {
      let n = numbered.get(id)
      if (n === undefined) {
        const a = world.agents.get(id)
        if (!a) return -1
        numbered.set(id, (n = agent.push(a) - 1))
      }
      return n
    },
    edges: (n) => world.activeEdges.get(agent[n].id),
  }
}

const TABLE_ROLES = new Set(Object.keys(POLICY_V1))

/** The role rules in their order: `none` on either role, then an unknown one on either. */
function roleRule(edgeRole: string, appliedRole: string | null): ExclusionReason | null {
  if (edgeRole === 'none' || appliedRole === 'none') return 'role_none'
  if (!TABLE_ROLES.has(edgeRole) || (appliedRole !== null && !TABLE_ROLES.has(appliedRole))) return 'unknown_role'
  return null
}

/** The one in-project active edge of an agent (of `all`, its active edges), or the reason it has none. */
function edgeOf(all: readonly EdgeFacts[] | undefined, a: AgentFacts): EdgeFacts | ExclusionReason {
  if (!all || all.length === 0) return 'missing_edge'
  if (all.length === 1) return all[0].projectId === a.projectId ? all[0] : 'scope_mismatch'
  const inProject = all.filter((e) => e.projectId === a.projectId)
  if (inProject.length > 1) return 'duplicate_active_edges'
  return inProject.length === 0 ? 'scope_mismatch' : inProject[0]
}

/** The step of an agent: the agent delegator is followed when present, not deleted, same project. */
function stepOf(g: Graph, n: number): Step {
  const a = g.agent[n]
  const edge = edgeOf(g.edges(n), a)
  if (typeof edge === 'string' || edge.delegator.kind !== 'agent') return {node: n, agent: a, edge, delegatorAgent: undefined, parent: -1}
  const p = g.node(edge.delegator.id)
  const pa = p >= 0 ? g.agent[p] : undefined
  return {node: n, agent: a, edge, delegatorAgent: pa, parent: pa && !pa.deleted && pa.projectId === a.projectId ? p : -1}
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
 * A world read by `loadWorld` is walked through its indexed view (plan-world.ts) while its maps
 * were never handed out and no hop is kept; the result is the same.
 */
export function planAdoption(world: World, scope: PlanScope = {}, ceilings: PlanCache = ceilingCache(), kept?: KeptHops<PlannedHop>): PlannedHop[] {
  // Kept hops belong to a start-up pass, which changes the world's maps as it goes.
  const indexed = kept ? null : indexedWorld(world)
  const g = indexed ? indexedGraph(indexed) : mapGraph(world)
  // The decided hop of each agent, by number. Made at its full length for a numbered world: an
  // array written first far past its end (an agent's ancestors come first) turns into a
  // dictionary, and every read of it into a hash lookup.
  const memo = new Array<PlannedHop | undefined>(indexed ? indexed.agents.length : 0)
  const stack: Step[] = []
  // Where an agent sits on the current walk: a scan while the walk is short (almost always; a
  // Map per walk costs more than the walk), an index once it grows long.
  let index: Map<number, number> | null = null
  const onStack = (n: number): number => {
    if (index) return index.get(n) ?? -1
    for (let i = 0; i < stack.length; i++) if (stack[i].node === n) return i
    if (stack.length >= 16) index = new Map(stack.map((st, i) => [st.node, i]))
    return -1
  }
  const resolve = (start: number): void => {
    let cur = start
    while (cur >= 0 && memo[cur] === undefined) {
      const k = kept?.hops.get(g.agent[cur].id)
      if (k) {
        memo[cur] = k
        // A kept hop ends the walk, but the agent planned for also needs its parent's hop (the verdict reads both).
        if (cur !== start) break
        cur = stepOf(g, cur).parent
        continue
      }
      const at = onStack(cur)
      if (at >= 0) {
        // The chain repeats: every member of the loop is a `cycle` hop; those below follow it.
        for (const m of stack.slice(at)) memo[m.node] = excluded(m.agent, m.edge as EdgeFacts, 1, 'cycle')
        stack.length = at
        break
      }
      const step = stepOf(g, cur)
      index?.set(cur, stack.length)
      stack.push(step)
      cur = step.parent
    }
    // Each step's parent is the step above it, decided just before; the top one's is in `memo`.
    const top = stack[stack.length - 1]
    let above = top && top.parent >= 0 ? (memo[top.parent] ?? null) : null
    for (let i = stack.length - 1; i >= 0; i--) {
      const step = stack[i]
      const h = decide(world, step, step.parent >= 0 ? above : null, ceilings)
      above = h
      memo[step.node] = h
      if (kept) {
        kept.hops.set(step.agent.id, h)
        if (step.parent >= 0) within(kept.children, g.agent[step.parent].id, () => [] as string[]).push(step.agent.id)
      }
    }
    stack.length = 0
    index = null
  }
  const inScope = (a: AgentFacts): boolean => !a.deleted && (scope.projectId === undefined || a.projectId === scope.projectId)
  if (scope.agentIds) {
    for (const id of scope.agentIds) {
      const n = g.node(id)
      if (n >= 0 && inScope(g.agent[n])) resolve(n)
    }
  } else if (indexed) {
    for (let n = 0; n < indexed.agents.length; n++) if (inScope(indexed.agents[n])) resolve(n)
  } else for (const a of world.agents.values()) if (inScope(a)) resolve(g.node(a.id))
  return topDown(memo, indexed?.inIdOrder === true)
}

/**
 * The hops top-down: by depth, then agent ID. Numbered in ID order (a world read from SQLite),
 * the hops are taken in order of number and only grouped by depth; else each depth is sorted.
 */
function topDown(memo: ReadonlyArray<PlannedHop | undefined>, inIdOrder: boolean): PlannedHop[] {
  const byDepth: PlannedHop[][] = []
  for (let n = 0; n < memo.length; n++) {
    const h = memo[n]
    if (h) (byDepth[h.depth] ??= []).push(h)
  }
  if (inIdOrder) return byDepth.flat()
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
