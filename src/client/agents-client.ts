import type {AgentDto, DeletedBranchDto} from '../api/dto.js'
import type {HubClient} from './hub-client.js'

export type Agent = AgentDto

export interface BrokerInfo {
  id: string
  name: string
  status: string
  connected: boolean
  capabilities: string[]
  runtimes: string[]
  version: string
  colocated: boolean
  agents: number
  createdAt: string
  lastSeenAt: string | null
}

export interface TemplateInfo {
  id: string
  name: string
  projectId: string | null
  description: string
  currentVersion: number
  createdAt: string
  updatedAt: string
}

const enc = encodeURIComponent
const AGENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The route of an agent named on the command line: an agent ID (a UUID) uses the top-level
 * `/api/v1/agents/<id>`, so it reaches the agent whatever the current project; a name is looked
 * up in `projectId` (`/api/v1/projects/<project>/agents/<name>`). Every agent command builds its
 * URLs from this one function (append `/keys`, `/message`, `/logs`, ...).
 */
export function agentRoute(ref: string, projectId: string): string {
  return AGENT_ID.test(ref) ? `/api/v1/agents/${enc(ref)}` : `/api/v1/projects/${enc(projectId)}/agents/${enc(ref)}`
}

/**
 * How long a create, start or restart may go without an answer: the Hub answers once the broker
 * has made the workspace and run its setup (`workspace.setup_timeout`, 10 minutes by default),
 * and gives the broker 15 minutes.
 */
const START_TIMEOUT_MS = 16 * 60_000

/** Typed calls for agents, brokers and templates (kept apart from the core client). */
export const agentsApi = (c: HubClient) => ({
  create: (body: {name: string; projectId: string; harnessConfig?: string; template?: string; task?: string; brokerId?: string; role?: string; runtime?: string; parentId?: string; limits?: Record<string, number>; attempts?: number; harnessConfigs?: string[]; check?: string}) =>
    // With `attempts`: `{group, agents}` instead (docs/teams.md, "Attempts").
    c.call<{agent: Agent} | {group: string; agents: Agent[]}>('POST', '/api/v1/agents', body, {timeoutMs: START_TIMEOUT_MS}),
  /** Stores a secret of the project (`scope: user`: the caller's own, delivered only to agents it starts). */
  putSecret: (projectId: string, key: string, value: string, scope: 'project' | 'user') =>
    c.call<unknown>('PUT', `/api/v1/projects/${enc(projectId)}/secrets/${enc(key)}`, {value, scope}),
  list: (q: {projectId?: string; phase?: string}) => {
    const qs = new URLSearchParams(Object.entries(q).filter(([, v]) => v) as Array<[string, string]>).toString()
    return c.call<{agents: Agent[]}>('GET', `/api/v1/agents${qs ? `?${qs}` : ''}`)
  },
  get: (projectId: string, agent: string) => c.call<{agent: Agent}>('GET', agentRoute(agent, projectId)),
  delete: (projectId: string, agent: string, opts: {branch?: boolean} = {}) => c.call<{agent: Agent; branch?: DeletedBranchDto}>('DELETE', `${agentRoute(agent, projectId)}${opts.branch ? '?branch=true' : ''}`),
  /** `setup` (restart): run the workspace's setup again (docs/environments.md). */
  action: (projectId: string, agent: string, action: 'stop' | 'start' | 'restart', body: {setup?: boolean} = {}) => c.call<{agent: Agent}>('POST', `${agentRoute(agent, projectId)}/${action}`, body, {timeoutMs: START_TIMEOUT_MS}),
  reincarnate: (projectId: string, agent: string, role?: string) => c.call<{agent: Agent}>('POST', `${agentRoute(agent, projectId)}/reincarnate`, role ? {role} : {}),
  logs: (projectId: string, agent: string) => c.call<string>('GET', `${agentRoute(agent, projectId)}/logs`, undefined, {headers: {accept: 'text/plain'}}),
  status: (agentId: string, body: {phase?: string; activity?: string; detail?: string; heartbeat?: boolean}) =>
    c.call<{ok: true}>('POST', `/api/v1/agents/${enc(agentId)}/status`, body),
  listBrokers: () => c.call<{brokers: BrokerInfo[]}>('GET', '/api/v1/brokers'),
  getBroker: (id: string) => c.call<{broker: BrokerInfo}>('GET', `/api/v1/brokers/${enc(id)}`),
  registerBroker: (name: string) => c.call<{broker: BrokerInfo; joinToken: string; expiresAt: string}>('POST', '/api/v1/brokers/register', {name}),
  joinBroker: (joinToken: string) => c.call<{brokerId: string; secret: string}>('POST', '/api/v1/brokers/join', {joinToken}),
  listTemplates: (projectId?: string) => c.call<{templates: TemplateInfo[]}>('GET', `/api/v1/templates${projectId ? `?projectId=${enc(projectId)}` : ''}`),
  uploadTemplate: (body: {name: string; projectId?: string | null; description?: string; files: Array<{path: string; content: string; sha256: string}>}) =>
    c.call<{template: TemplateInfo; version: {seq: number; manifest: Array<{path: string; size: number; sha256: string}>}; created: boolean}>('POST', '/api/v1/templates', body),
})
