import type {Repos} from '../../store/store.js'
import type {EdgeFacts} from '../../store/repositories/delegation-edges.js'
import type {PlannerAgentFacts} from '../../store/repositories/agents.js'

/** What the planner needs to know of one agent (deleted ones too: `parent_deleted`). */
export type AgentFacts = PlannerAgentFacts

/** What the planner reads; agents are keyed by their ID. */
export interface World {
  agents: Map<string, AgentFacts>
  /** Active edges by delegate agent ID (full EdgeRecords fit too; timestamps are never read). */
  activeEdges: Map<string, EdgeFacts[]>
  users: Map<string, {status: string}>
}

/**
 * A world's agents numbered densely, each one's active edges beside it: what a full plan of a
 * world read from the store walks instead of the maps. A plan of 100k agents otherwise does
 * ~6 lookups an agent in maps of 100k string keys (its edges, its delegator, its own and its
 * parent's hop), each a few cache misses: more than half of the plan's time.
 */
export interface IndexedWorld {
  agents: readonly AgentFacts[]
  /** Agent ID -> its number. */
  index: ReadonlyMap<string, number>
  /** Each agent's active edges, by its number. */
  edges: ReadonlyArray<readonly EdgeFacts[] | undefined>
  /** Whether `agents` come in ID order (code units), as the SQLite read gives them: a plan's hops then need no sort. */
  inIdOrder: boolean
}

/**
 * A world read from the store. Its maps are made on first use, and from then on its indexed
 * view is no longer given: a caller may change the maps (the start-up pass does, hop by hop),
 * and the view would not follow.
 */
class StoreWorld implements World {
  readonly users: Map<string, {status: string}>
  readonly #facts: AgentFacts[]
  readonly #edges: EdgeFacts[]
  #maps: {agents: Map<string, AgentFacts>; activeEdges: Map<string, EdgeFacts[]>} | null = null
  #indexed: IndexedWorld | null
  constructor(users: Map<string, {status: string}>, facts: AgentFacts[], edges: EdgeFacts[]) {
    this.users = users
    this.#facts = facts
    this.#edges = edges
    this.#indexed = indexWorld(facts, edges)
  }
  get agents(): Map<string, AgentFacts> {
    return this.#made().agents
  }
  get activeEdges(): Map<string, EdgeFacts[]> {
    return this.#made().activeEdges
  }
  get indexed(): IndexedWorld | null {
    return this.#indexed
  }
  #made() {
    if (!this.#maps) {
      const agents = new Map<string, AgentFacts>()
      for (const a of this.#facts) agents.set(a.id, a)
      const activeEdges = new Map<string, EdgeFacts[]>()
      for (const e of this.#edges) {
        const list = activeEdges.get(e.delegateAgentId)
        if (list) list.push(e)
        else activeEdges.set(e.delegateAgentId, [e])
      }
      this.#maps = {agents, activeEdges}
      this.#indexed = null
    }
    return this.#maps
  }
}

/** Numbers the agents in the order given; null if two share an ID (the maps then decide, as before). */
function indexWorld(agents: AgentFacts[], edges: EdgeFacts[]): IndexedWorld | null {
  const index = new Map<string, number>()
  let inIdOrder = true
  for (let i = 0; i < agents.length; i++) {
    const id = agents[i].id
    if (i > 0 && !(agents[i - 1].id < id)) inIdOrder = false
    index.set(id, i)
  }
  if (index.size !== agents.length) return null
  // An edge whose delegate is no agent is never planned (a plan starts from agents).
  const byAgent = new Array<EdgeFacts[] | undefined>(agents.length)
  for (const e of edges) {
    const i = index.get(e.delegateAgentId)
    if (i === undefined) continue
    const list = byAgent[i]
    if (list) list.push(e)
    else byAgent[i] = [e]
  }
  return {agents, index, edges: byAgent, inIdOrder}
}

/** The indexed view of a world read by `loadWorld` whose maps were never handed out; else null. */
export const indexedWorld = (world: World): IndexedWorld | null => (world instanceof StoreWorld ? world.indexed : null)

/**
 * Loads everything the planner reads in bulk: lean columns, no timestamps, the config's facts
 * from their columns. On SQLite agents and active edges are read packed (`listPlannerWorld`);
 * elsewhere through the query builder.
 */
export async function loadWorld(repos: Repos): Promise<World> {
  const bulk = await repos.agents.listPlannerWorld()
  const [facts, edges] = bulk ? [bulk.agents, bulk.edges] : await Promise.all([repos.agents.listPlannerAgents(), repos.delegationEdges.listActiveFacts()])
  return worldOf(await repos.users.statuses(), facts, edges)
}

/** A world of these agents (in the order given) and active edges, as `loadWorld` makes it. */
export const worldOf = (users: Map<string, {status: string}>, agents: AgentFacts[], edges: EdgeFacts[]): World => new StoreWorld(users, agents, edges)
