import type {AgentDto} from '../api/dto.js'

export interface AgentTreeNode {
  agent: AgentDto
  children: AgentTreeNode[]
}

/** `GET /api/v1/agents/:id/tree` as the CLI receives it. */
export interface AgentTree {
  tree: AgentTreeNode
  totals: {agents: number; costUsd: number; modelCalls: number; turns: number}
}

const state = (a: AgentDto) => (a.phase === 'running' ? a.activity ?? 'running' : a.phase)
const cost = (usd: number) => `$${usd.toFixed(2)}`

/**
 * One line per agent, indented under its parent with tree rules:
 * `lead  idle  svc/lead  $0.25  (3 agents, 2 model calls, $0.25)`.
 */
export function renderTrees(trees: AgentTree[]): string {
  if (trees.length === 0) return 'No agents.'
  const out: string[] = []
  const line = (n: AgentTreeNode, prefix: string, last: boolean, root: boolean) => {
    const a = n.agent
    const own = a.usage?.costUsd ?? 0
    const lead = root ? '' : `${prefix}${last ? '└─ ' : '├─ '}`
    out.push(`${lead}${a.name}  ${state(a)}  ${a.workspace?.branch ?? '-'}  ${cost(own)}`)
    const next = root ? '' : `${prefix}${last ? '   ' : '│  '}`
    n.children.forEach((c, i) => line(c, next, i === n.children.length - 1, false))
  }
  for (const t of trees) {
    line(t.tree, '', true, true)
    out.push(`  total: ${t.totals.agents} agent${t.totals.agents === 1 ? '' : 's'}, ${t.totals.turns} turns, ${t.totals.modelCalls} model calls, ${cost(t.totals.costUsd)}`)
  }
  return out.join('\n')
}
