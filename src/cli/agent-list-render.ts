import type {Agent} from '../client/agents-client.js'
import {bold, table, useColor} from './render.js'
import {costOf, stateOf} from './agent-render.js'

/**
 * `svc agent list`'s table (docs/cli.md "Agents"): agents that need a person first, a TASK column,
 * short IDs, a LANDED marker and a footer with the total cost.
 */

/**
 * Those that need you first: waiting for input (a question, a permission), then failed (phase
 * `error`), then the rest in the Hub's order (oldest first). Stable within each group.
 */
export function needsYouFirst(agents: Agent[]): Agent[] {
  const rank = (a: Agent) => (a.phase === 'running' && a.activity === 'waiting_for_input' ? 0 : a.phase === 'error' ? 1 : 2)
  return agents.map((a, i) => ({a, i})).sort((x, y) => rank(x.a) - rank(y.a) || x.i - y.i).map((x) => x.a)
}

/**
 * The shortest prefix of each ID, 8 characters or more, that no other listed ID starts with (as
 * git shortens hashes). The Hub takes any unique prefix of 8 or more wherever it takes an ID.
 */
export function shortIds(ids: string[], min = 8): Map<string, string> {
  const sorted = [...new Set(ids)].sort()
  const common = (a: string | undefined, b: string) => {
    if (!a) return 0
    let n = 0
    while (n < a.length && n < b.length && a[n] === b[n]) n++
    return n
  }
  const out = new Map<string, string>()
  sorted.forEach((id, i) => {
    // In sorted order the longest shared start is with a neighbour.
    const shared = Math.max(common(sorted[i - 1], id), common(sorted[i + 1], id))
    let len = Math.max(min, shared + 1)
    // A prefix ending in a dash names no more than the one before it: take the next character too.
    if (id[len - 1] === '-') len++
    out.set(id, id.slice(0, Math.min(len, id.length)))
  })
  return out
}

/** The task's first non-blank line, blanks collapsed; '' without a task. */
export const taskLine = (a: Agent) => (a.task ?? '').split('\n').map((l) => l.replace(/\s+/g, ' ').trim()).find((l) => l) ?? ''

/** What landed of the agent's work: `merged`, `pushed`, both, or '' (see the Hub's mergedAt/pushedAt). */
export const landedOf = (a: Agent) => [a.mergedAt ? 'merged' : '', a.pushedAt ? 'pushed' : ''].filter(Boolean).join(', ')

const dollars = (usd: number) => `$${usd >= 1 || usd === 0 ? usd.toFixed(2) : usd.toFixed(4)}`

/** `3 agents, total cost $1.27` (the cost of every listed agent's reported usage). */
export function listFooter(agents: Agent[]): string {
  const total = agents.reduce((sum, a) => sum + (a.usage?.costUsd ?? 0), 0)
  return `${agents.length} agent${agents.length === 1 ? '' : 's'}, total cost ${dollars(total)}`
}

/** At least this much of a task is shown, however narrow the terminal. */
const MIN_TASK = 10

export interface AgentListOptions {
  /** `+added -deleted` by agent ID (agent-diffstats.ts); blank when unknown. */
  changes?: Map<string, string>
  /** Full IDs and whole tasks (`--wide`). */
  wide?: boolean
  /**
   * The terminal's width: lines longer are cut inside the TASK column, ending in `…`. Null when
   * stdout is not a terminal: nothing is cut (pipes, scripts and snapshots get whole lines).
   */
  width?: number | null
  color?: boolean
  /** IDs the short IDs must be unique among, besides the listed ones (the project's other agents, when a filter hid them). */
  otherIds?: string[]
}

export function agentListTable(list: Agent[], o: AgentListOptions = {}): string {
  if (list.length === 0) return 'No agents.'
  const agents = needsYouFirst(list)
  const ids = o.wide ? null : shortIds([...agents.map((a) => a.id), ...(o.otherIds ?? [])])
  const withBranch = agents.some((a) => a.workspace)
  const headers = ['name', 'state', 'detail', 'harness', 'cost', ...(withBranch ? ['branch', 'changes', 'landed'] : []), 'id', 'task']
  const rows = agents.map((a) => [
    a.name,
    stateOf(a),
    a.detail,
    a.harnessConfig,
    costOf(a),
    ...(withBranch ? [a.workspace?.branch ?? '', o.changes?.get(a.id) ?? '', landedOf(a)] : []),
    ids?.get(a.id) ?? a.id,
    taskLine(a),
  ])
  let lines = table(headers, rows).split('\n')
  if (o.width && !o.wide) {
    // TASK is the last column: a line is cut there, never inside the columns before it.
    const taskAt = lines[0].lastIndexOf('TASK')
    const keep = Math.max(o.width, taskAt + MIN_TASK)
    lines = lines.map((l) => (l.length > keep ? `${l.slice(0, keep - 1)}…` : l))
  }
  if (o.color) lines[0] = bold(lines[0], true)
  return [...lines, listFooter(agents)].join('\n')
}

/** The agent list as `svc agent list` prints it on this process's stdout. */
export function agentTable(agents: Agent[], changes?: Map<string, string>, opts: {wide?: boolean; otherIds?: string[]} = {}): string {
  return agentListTable(agents, {changes, wide: opts.wide, otherIds: opts.otherIds, width: process.stdout.isTTY ? process.stdout.columns || 80 : null, color: useColor()})
}
