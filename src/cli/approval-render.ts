import type {Approval} from '../client/approvals-client.js'

/** Who decided, in a few words. */
export function deciderOf(a: Approval): string {
  const by = a.decidedBy
  if (!by) return ''
  if (by.kind === 'rule') return `rule ${by.index}`
  if (by.kind === 'terminal') return 'at the terminal'
  return `${by.kind} ${by.id}`
}

/** One line per approval: when, agent, tool and what it runs, its state (and who decided). */
export function approvalLine(a: Approval): string {
  const what = a.summary ? `${a.tool}: ${a.summary}` : a.tool
  const state = a.state === 'pending' ? 'pending' : `${a.state}${a.decidedBy ? ` (${deciderOf(a)})` : ''}${a.reason ? `: ${a.reason}` : ''}`
  return `${a.createdAt.slice(11, 19)}  ${a.agentName}  ${what}  [${state}]  ${a.id}`
}

export function approvalsTable(list: Approval[]): string {
  return list.length ? list.map(approvalLine).join('\n') : 'No pending approvals.'
}
