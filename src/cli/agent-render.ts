import type {Agent} from '../client/agents-client.js'
import {fields} from './render.js'

/** Phase, and activity when there is one: `running/thinking`, `stopped/limits_exceeded`. */
export const stateOf = (a: Agent) => (a.activity ? `${a.phase}/${a.activity}` : a.phase)

/** Cost in US dollars as `$1.23` (cents below a dollar show 4 digits: `$0.0042`); `-` without usage. */
export const costOf = (a: Agent) => (a.usage ? `$${a.usage.costUsd >= 1 || a.usage.costUsd === 0 ? a.usage.costUsd.toFixed(2) : a.usage.costUsd.toFixed(4)}` : '-')

/** `12.3k in, 4.5k out, 7 calls, $0.12` */
export function usageOf(a: Agent): string | null {
  const u = a.usage
  if (!u) return null
  const n = (x: number) => (x >= 1_000_000 ? `${(x / 1_000_000).toFixed(1)}M` : x >= 1000 ? `${(x / 1000).toFixed(1)}k` : String(x))
  const cache = (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0)
  return `${n(u.inputTokens)} in, ${n(u.outputTokens)} out${cache ? `, ${n(cache)} cache` : ''}, ${u.modelCalls} model calls, ${costOf(a)}`
}

/** Teams: the effective limits of its subtree, `10 turns, 200 model calls, $5.00, 3600s, 4 children, depth 2`; null without any. */
export function limitsText(a: Agent): string | null {
  const l = a.limits
  if (!l) return null
  const parts = [
    l.maxTurns !== null && `${l.maxTurns} turns`,
    l.maxModelCalls !== null && `${l.maxModelCalls} model calls`,
    l.maxCostUsd !== null && `$${l.maxCostUsd.toFixed(2)}`,
    l.maxDurationSeconds !== null && `${l.maxDurationSeconds}s`,
    l.maxChildren !== null && `${l.maxChildren} children`,
    l.maxDepth !== null && `depth ${l.maxDepth}`,
  ].filter((p): p is string => typeof p === 'string')
  return parts.length ? `${parts.join(', ')} (with its descendants)` : null
}

export function agentFields(a: Agent): string {
  return fields([
    ['Name', a.name],
    ['ID', a.id],
    ['Project', a.projectId],
    ['State', stateOf(a)],
    ['Detail', a.detail],
    ['Harness', a.harnessConfig],
    ['Role', a.role],
    ['Runtime', a.runtime],
    ['Image', a.image],
    ['Sandbox', a.sandbox === 'none' ? 'none (unsandboxed: runs as the broker\'s user with its files and environment)' : a.sandbox],
    ['Workspace', a.workspace?.path ?? null],
    ['Branch', a.workspace ? `${a.workspace.branch} (from ${a.workspace.baseRef} at ${a.workspace.baseCommit.slice(0, 12)})` : null],
    ['Turns', a.turns ? String(a.turns) : null],
    ['Broker', a.brokerId],
    ['Error', a.error],
    ['Usage', usageOf(a)],
    ['Limits', limitsText(a)],
    ['Created', `${a.createdAt} by ${a.createdBy.kind} ${a.createdBy.id}`],
    ['Last heartbeat', a.lastHeartbeatAt],
  ])
}
