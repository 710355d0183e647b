/**
 * Teams: the lineage of an agent as a tree (who spawned whom), each node the agent as every
 * other read shows it, with the totals of the whole subtree. Read level by level (one query per
 * generation), deleted agents left out.
 */
import {notFound} from '../../api/app-error.js'
import type {AgentDto} from '../../api/dto.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {AgentAccess} from '../agents/access.js'
import type {CallContext} from '../authz/context.js'
import type {Deps} from '../deps.js'

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

// Far deeper than any team; bounds the walk should records ever point in a circle.
const MAX_DEPTH = 64

export function createTeamsService(deps: Deps, a: {access: AgentAccess; view: (r: AgentRecord) => AgentDto}) {
  const {store} = deps

  async function projectIdOf(ref: string): Promise<string> {
    const p = (await store.projects.get(ref)) ?? (await store.projects.getBySlug(ref))
    if (!p) throw notFound('project')
    return p.id
  }

  return {
    /** The subtree under `ref` (read permission on the root decides, as for reading the agent). */
    async tree(ctx: CallContext, ref: string, projectRef?: string): Promise<{tree: TreeNode; totals: TreeTotals}> {
      const root = await a.access.resolve(ref, projectRef ? await projectIdOf(projectRef) : undefined)
      if (!root) throw notFound('agent')
      await a.access.checkAgent(ctx, root, 'agent.read')
      const nodes = new Map<string, TreeNode>([[root.id, {agent: a.view(root), children: []}]])
      const totals: TreeTotals = {agents: 0, costUsd: 0, modelCalls: 0, turns: 0}
      const add = (r: AgentRecord) => {
        totals.agents++
        totals.turns += r.turns
        totals.modelCalls += r.usage?.modelCalls ?? 0
        totals.costUsd += r.usage?.costUsd ?? 0
      }
      add(root)
      let level = [root.id]
      for (let depth = 0; level.length && depth < MAX_DEPTH; depth++) {
        const children = (await store.agents.childrenOf(level)).filter((c) => !nodes.has(c.id) && c.projectId === root.projectId)
        for (const c of children) {
          const node = {agent: a.view(c), children: []}
          nodes.set(c.id, node)
          nodes.get(c.parent!.id)!.children.push(node)
          add(c)
        }
        level = children.map((c) => c.id)
      }
      totals.costUsd = Math.round(totals.costUsd * 1e6) / 1e6
      return {tree: nodes.get(root.id)!, totals}
    },
  }
}

export type TeamsService = ReturnType<typeof createTeamsService>
