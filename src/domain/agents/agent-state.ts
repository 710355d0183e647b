import type {AgentDto} from '../../api/dto.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {StatusPatch} from './status-writer.js'
import {limitsOf} from '../teams/budgets.js'

export const PHASES = ['created', 'provisioning', 'cloning', 'running', 'stopped', 'error'] as const
export const ACTIVITIES = ['idle', 'thinking', 'executing', 'waiting_for_input', 'completed', 'limits_exceeded', 'offline'] as const

/** Activities that stay on an agent once it stopped: what ended it. */
export const TERMINAL_ACTIVITIES = ['completed', 'limits_exceeded'] as const

/** No heartbeat for this long makes a running agent's activity `offline`. */
export const HEARTBEAT_TIMEOUT_MS = 90_000

/** What callers see of an agent (the wire shape). */
export type AgentView = AgentDto

/**
 * The layered state a caller sees: the stored record with any status report still pending
 * overlaid. Activity exists only in the running phase, and is derived as `offline` when the
 * agent has not been heard from within the heartbeat timeout (never stored).
 */
export function agentView(a: AgentRecord, pending: StatusPatch | undefined, nowMs: number): AgentView {
  const phase = pending?.phase ?? a.phase
  const heartbeat = pending?.heartbeatAt ?? a.lastHeartbeatAt
  let activity = pending?.activity !== undefined ? pending.activity : a.activity
  // An end the agent reached (its task completed, a limit stopped it) outlives the stop.
  if (phase !== 'running') activity = activity !== null && (TERMINAL_ACTIVITIES as readonly string[]).includes(activity) ? activity : null
  else {
    const since = heartbeat ?? a.updatedAt
    if (nowMs - Date.parse(since) > HEARTBEAT_TIMEOUT_MS) activity = 'offline'
  }
  return {
    id: a.id,
    name: a.name,
    slug: a.name,
    projectId: a.projectId,
    brokerId: a.brokerId,
    phase,
    activity,
    detail: pending?.detail ?? a.detail,
    harnessConfig: a.harnessConfig,
    template: a.template,
    task: a.task,
    role: a.role,
    runtime: a.runtime,
    error: pending?.error !== undefined ? pending.error : a.error,
    createdBy: a.createdBy,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    lastHeartbeatAt: heartbeat,
    messageMode: a.messageMode,
    appliedSettings: (a.config.applied as AgentDto['appliedSettings'] | undefined) ?? {},
    workspace: a.workspace,
    image: a.image,
    sandbox: a.sandbox,
    turns: a.turns,
    usage: a.usage,
    parent: a.parent,
    limits: limitsOf(a),
    group: a.group ?? null,
    check: a.check ?? null,
  }
}
