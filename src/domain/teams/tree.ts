/**
 * Teams: the lineage of an agent as a tree (who spawned whom), each node the agent as every
 * other read shows it, with the totals of the whole subtree. Read level by level (one query per
 * generation), deleted agents left out.
 *
 * The answer is built as JSON, node by node, into one buffer: on SQLite each node's JSON comes
 * from the store (agent-tree-rows.ts) and only the fields a pending report or the clock change
 * (and the effective limits) are added here, so a 1,000-agent tree makes no record, view or tree
 * of objects to serialize again (docs/teams.md, "Benchmarks"); elsewhere each node is
 * `view(record)` stringified.
 */
import {notFound} from '../../api/app-error.js'
import type {AgentDto} from '../../api/dto.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {TreeLevelRow} from '../../store/repositories/agent-tree-rows.js'
import type {AgentAccess} from '../agents/access.js'
import type {CallContext, Principal} from '../authz/context.js'
import {detailFor, shownTo} from '../approvals/detail-visibility.js'
import type {Deps} from '../deps.js'
import {limitsOf} from './budgets.js'

/** The shape of the answer's `tree` (the route sends it as text: `TreeAnswer`). */
export interface TreeNode {
  agent: AgentDto
  children: TreeNode[]
}

export interface TreeTotals {
  agents: number
  costUsd: number
  modelCalls: number
  turns: number
}

/** `{tree: TreeNode, totals: TreeTotals}` as JSON (UTF-8), ready to send. */
export interface TreeAnswer {
  json: Buffer
}

// Far deeper than any team; bounds the walk should records ever point in a circle.
const MAX_DEPTH = 64

interface Child {
  id: string
  parentId: string
  json: string
  turns: number
  modelCalls: number
  costUsd: number
}

interface Built {
  id: string
  json: string
  children: Built[]
}

/**
 * The tree's JSON as UTF-8 bytes, written piece by piece into one buffer: no string of the whole
 * answer is made (a 1,000-agent tree is the better part of a MiB, made and then encoded again by
 * the socket's write on every request).
 */
function render(top: Built, head: string, tail: string): Buffer {
  let out = Buffer.allocUnsafe(1 << 16)
  let at = 0
  const put = (text: string) => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: grow before a piece that might not fit.
    if (at + text.length * 3 > out.length) {
      const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, at + text.length * 3))
      out.copy(bigger, 0, 0, at)
      out = bigger
    }
    at += out.write(text, at)
  }
  const walk = (n: Built) => {
    put('{"agent":')
    put(n.json)
    put(',"children":[')
    n.children.forEach((c, i) => {
      if (i) put(',')
      walk(c)
    })
    put(']}')
  }
  put(head)
  walk(top)
  put(tail)
  return out.subarray(0, at)
}

// The record `view` is given for a SQLite row's live fields: the row's phase, activity, detail,
// error, heartbeat and update time over neutral values (none of which the live fields read).
const LIVE_STUB: AgentRecord = {id: '', projectId: '', name: '', brokerId: null, phase: '', activity: null, detail: '', harnessConfig: '', template: null, task: null, role: '', runtime: null, runtimeRef: null, config: {}, error: null, createdBy: {kind: 'user', id: ''}, createdAt: '', updatedAt: '', lastHeartbeatAt: null, deletedAt: null, messageMode: '', workspace: null, image: null, sandbox: null, turns: 0, usage: null, parent: null, limits: null, group: null, checkCommand: null, check: null}

export function createTeamsService(deps: Deps, a: {access: AgentAccess; view: (r: AgentRecord) => AgentDto}) {
  const {store} = deps

  async function projectIdOf(ref: string): Promise<string> {
    const p = (await store.projects.get(ref)) ?? (await store.projects.getBySlug(ref))
    if (!p) throw notFound('project')
    return p.id
  }

  /** A SQLite row's node JSON: the store's part plus the live fields (the detail as `reader` may read it) and the effective limits. */
  function nodeJson(r: TreeLevelRow, limitsCache: Map<string, string>, reader: Principal): string {
    // The fields a pending status report or the clock change, as every read derives them.
    const [id, parentId, phase, activity, detail, error, lastHeartbeatAt, updatedAt, limitsText, applied, , , , json] = r
    const live = a.view({...LIVE_STUB, id, phase, activity, detail, error, lastHeartbeatAt, updatedAt})
    // Children mostly share their limits (lowered from one parent's): each distinct text is derived once.
    const key = limitsText ?? `\0${applied ?? ''}`
    let limits = limitsCache.get(key)
    if (limits === undefined) {
      limits = JSON.stringify(limitsOf({limits: limitsText === null ? null : JSON.parse(limitsText), config: {applied: applied === null ? undefined : JSON.parse(applied)}}))
      limitsCache.set(key, limits)
    }
    return `${json.slice(0, -1)},"phase":${JSON.stringify(live.phase)},"activity":${JSON.stringify(live.activity)},"detail":${JSON.stringify(detailFor(reader, {id, parentId}, live.detail))},"error":${JSON.stringify(live.error)},"lastHeartbeatAt":${JSON.stringify(live.lastHeartbeatAt)},"limits":${limits}}`
  }

  /**
   * One generation: the live children in `projectId` of `parentIds`, each with its node's JSON and
   * what it adds to the totals. On SQLite the store builds the JSON (`treeLevel`); elsewhere it is
   * `view(record)` stringified.
   */
  async function childrenAt(projectId: string, parentIds: string[], limitsCache: Map<string, string>, reader: Principal): Promise<Child[]> {
    const rows = await store.agents.treeLevel(projectId, parentIds)
    if (rows) {
      return rows.map((r) => {
        const [id, parentId, , , , , , , , , modelCalls, costUsd, turns] = r
        return {id, parentId, json: nodeJson(r, limitsCache, reader), turns, modelCalls: modelCalls ?? 0, costUsd: costUsd ?? 0}
      })
    }
    return (await store.agents.childrenOf(parentIds))
      .filter((c) => c.projectId === projectId)
      .map((c) => ({id: c.id, parentId: c.parent!.id, json: JSON.stringify(shownTo(reader, a.view(c))), turns: c.turns, modelCalls: c.usage?.modelCalls ?? 0, costUsd: c.usage?.costUsd ?? 0}))
  }

  return {
    /** The subtree under `ref` (read permission on the root decides, as for reading the agent). */
    async tree(ctx: CallContext, ref: string, projectRef?: string): Promise<TreeAnswer> {
      const root = await a.access.resolve(ref, projectRef ? await projectIdOf(projectRef) : undefined)
      if (!root) throw notFound('agent')
      await a.access.checkAgent(ctx, root, 'agent.read')
      const top: Built = {id: root.id, json: JSON.stringify(shownTo(ctx.principal, a.view(root))), children: []}
      const nodes = new Map<string, Built>([[root.id, top]])
      const totals: TreeTotals = {agents: 1, costUsd: root.usage?.costUsd ?? 0, modelCalls: root.usage?.modelCalls ?? 0, turns: root.turns}
      const limitsCache = new Map<string, string>()
      let level = [root.id]
      for (let depth = 0; level.length && depth < MAX_DEPTH; depth++) {
        const next: string[] = []
        for (const c of await childrenAt(root.projectId, level, limitsCache, ctx.principal)) {
          if (nodes.has(c.id)) continue
          const node = {id: c.id, json: c.json, children: []}
          nodes.set(c.id, node)
          nodes.get(c.parentId)!.children.push(node)
          next.push(c.id)
          totals.agents++
          totals.turns += c.turns
          totals.modelCalls += c.modelCalls
          totals.costUsd += c.costUsd
        }
        level = next
      }
      totals.costUsd = Math.round(totals.costUsd * 1e6) / 1e6
      return {json: render(top, '{"tree":', `,"totals":${JSON.stringify(totals)}}`)}
    },
  }
}

export type TeamsService = ReturnType<typeof createTeamsService>
