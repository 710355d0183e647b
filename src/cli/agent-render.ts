import type {Agent} from '../client/agents-client.js'
import {fields, table, useColor} from './render.js'

/** Phase, and activity when running: `running/thinking`. */
export const stateOf = (a: Agent) => (a.phase === 'running' && a.activity ? `${a.phase}/${a.activity}` : a.phase)

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
    ['Broker', a.brokerId],
    ['Error', a.error],
    ['Created', `${a.createdAt} by ${a.createdBy.kind} ${a.createdBy.id}`],
    ['Last heartbeat', a.lastHeartbeatAt],
  ])
}

export function agentTable(agents: Agent[]): string {
  if (agents.length === 0) return 'No agents.'
  return table(['name', 'state', 'detail', 'harness', 'id'], agents.map((a) => [a.name, stateOf(a), a.detail, a.harnessConfig, a.id]), useColor())
}
