/**
 * An agent row as the domain reads it (AgentRecord), and the shapes of a change and a filter:
 * kept apart from the queries (agents.ts) so both stay small.
 */
import type {Selectable} from 'kysely'
import type {AgentsTable} from '../schema.js'
import type {AgentLimits, AgentUsage, AgentWorkspace} from '../../api/dto.js'

export interface AgentRecord {
  id: string
  projectId: string
  name: string
  brokerId: string | null
  phase: string
  activity: string | null
  detail: string
  harnessConfig: string
  template: string | null
  task: string | null
  role: string
  runtime: string | null
  runtimeRef: string | null
  config: Record<string, unknown>
  error: string | null
  createdBy: {kind: 'user' | 'agent'; id: string}
  createdAt: string
  updatedAt: string
  lastHeartbeatAt: string | null
  deletedAt: string | null
  /** `open` accepts messages; `closed` refuses them (keys are not affected). */
  messageMode: string
  /** The agent's git workspace as its broker made it; null before dispatch or without a checkout. */
  workspace: AgentWorkspace | null
  /** The image and sandbox it was dispatched with (null: none). */
  image: string | null
  sandbox: string | null
  /** Turns ended, counted for `max_turns`. */
  turns: number
  usage: AgentUsage | null
  /** Teams: the agent that leads it (its creator's credential, or `--parent`); null for a root. */
  parent: {id: string; name: string} | null
  /** Teams: the effective limits of its subtree (teams/budgets.ts); null for agents made before them. */
  limits: AgentLimits | null
  /** Teams, attempts: the group of `--attempts` (its name), else null. */
  group: string | null
  /** Teams, attempts: the command run in its sandbox whenever it goes idle, else null. */
  checkCommand: string | null
  /** The last check's result (teams/attempts-check.ts), null before the first. */
  check: AgentCheck | null
}

export interface AgentCheck {
  status: 'running' | 'passed' | 'failed'
  exitCode: number | null
  output: string
}

function parseJson<T>(text: string | null): T | null {
  if (text === null) return null
  try {
    return JSON.parse(text) as T
  } catch {
    return null
  }
}

export const toAgent = (r: Selectable<AgentsTable>): AgentRecord => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  brokerId: r.broker_id,
  phase: r.phase,
  activity: r.activity,
  detail: r.detail,
  harnessConfig: r.harness_config,
  template: r.template,
  task: r.task,
  role: r.role,
  runtime: r.runtime,
  runtimeRef: r.runtime_ref,
  config: JSON.parse(r.config),
  error: r.error,
  createdBy: {kind: r.created_by_kind as 'user' | 'agent', id: r.created_by_id},
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastHeartbeatAt: r.last_heartbeat_at,
  deletedAt: r.deleted_at,
  messageMode: r.message_mode,
  workspace: parseJson<AgentWorkspace>(r.workspace),
  image: r.image,
  sandbox: r.sandbox,
  turns: Number(r.turns ?? 0),
  usage: parseJson<AgentUsage>(r.usage),
  parent: r.parent_id ? {id: r.parent_id, name: r.parent_name ?? ''} : null,
  limits: parseJson<AgentLimits>(r.limits),
  group: r.group_name ?? null,
  checkCommand: r.check_command ?? null,
  check: parseJson<AgentCheck>(r.check_result ?? null),
})

export interface AgentPatch {
  phase?: string
  activity?: string | null
  detail?: string
  brokerId?: string | null
  runtime?: string | null
  runtimeRef?: string | null
  error?: string | null
  lastHeartbeatAt?: string
  deletedAt?: string
  messageMode?: string
  /** Reincarnation: a new role, and the user who re-recorded the agent's delegation. */
  role?: string
  createdBy?: {kind: string; id: string}
  workspace?: AgentWorkspace | null
  image?: string | null
  sandbox?: string | null
  turns?: number
  usage?: AgentUsage | null
  check?: AgentCheck | null
}

export interface AgentFilter {
  /** Only these agents. */
  ids?: string[]
  projectIds?: string[]
  createdById?: string
  /** Children of these agents (Teams). */
  parentIds?: string[]
  /** Attempts of this group (Teams). */
  group?: string
  phase?: string
  brokerId?: string
  includeDeleted?: boolean
}

