import type {AgentDto} from '../api/dto.js'
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
/** Path of an agent in its project: the project-scoped form accepts the agent's name too. */
export const agentPath = (projectId: string, agent: string) => `/api/v1/projects/${enc(projectId)}/agents/${enc(agent)}`

/** Typed calls for agents, brokers and templates (kept apart from the core client). */
export const agentsApi = (c: HubClient) => ({
  create: (body: {name: string; projectId: string; harnessConfig?: string; template?: string; task?: string; brokerId?: string; role?: string}) =>
    c.call<{agent: Agent}>('POST', '/api/v1/agents', body),
  list: (q: {projectId?: string; phase?: string}) => {
    const qs = new URLSearchParams(Object.entries(q).filter(([, v]) => v) as Array<[string, string]>).toString()
    return c.call<{agents: Agent[]}>('GET', `/api/v1/agents${qs ? `?${qs}` : ''}`)
  },
  get: (projectId: string, agent: string) => c.call<{agent: Agent}>('GET', agentPath(projectId, agent)),
  delete: (projectId: string, agent: string) => c.call<{agent: Agent}>('DELETE', agentPath(projectId, agent)),
  action: (projectId: string, agent: string, action: 'stop' | 'start' | 'restart') => c.call<{agent: Agent}>('POST', `${agentPath(projectId, agent)}/${action}`, {}),
  reincarnate: (projectId: string, agent: string, role?: string) => c.call<{agent: Agent}>('POST', `${agentPath(projectId, agent)}/reincarnate`, role ? {role} : {}),
  logs: (projectId: string, agent: string) => c.call<string>('GET', `${agentPath(projectId, agent)}/logs`, undefined, {headers: {accept: 'text/plain'}}),
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
