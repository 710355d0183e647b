import {requestJson, type RequestOptions} from './http.js'

/** Typed client of the Hub API, shared by the CLI, the broker and tests. */
export class HubClient {
  constructor(
    readonly endpoint: string,
    private readonly token: string | null,
  ) {}

  async call<T>(method: string, path: string, body?: unknown, opts: Omit<RequestOptions, 'body' | 'token'> = {}): Promise<T> {
    const res = await requestJson<T>(method, this.endpoint.replace(/\/+$/, '') + path, {...opts, body, token: this.token})
    return res.body
  }

  me() {
    return this.call<Me>('GET', '/api/v1/auth/me')
  }
  listProjects() {
    return this.call<{projects: Project[]}>('GET', '/api/v1/projects')
  }
  registerProject(body: {name: string; gitRemote?: string | null}) {
    return this.call<{project: Project; created: boolean}>('POST', '/api/v1/projects/register', body)
  }
  getProject(id: string) {
    return this.call<{project: Project & {stats: Record<string, number>}}>('GET', `/api/v1/projects/${encodeURIComponent(id)}`)
  }
  deleteProject(id: string) {
    return this.call<{project: Project}>('DELETE', `/api/v1/projects/${encodeURIComponent(id)}`)
  }
  createToken(body: {name: string; projectId: string; permissions: string[]; expiresAt?: string}) {
    return this.call<AccessTokenView & {token: string}>('POST', '/api/v1/auth/tokens', body)
  }
  listTokens() {
    return this.call<{tokens: AccessTokenView[]}>('GET', '/api/v1/auth/tokens')
  }
  revokeToken(id: string) {
    return this.call<{token: AccessTokenView}>('DELETE', `/api/v1/auth/tokens/${encodeURIComponent(id)}`)
  }
}

export interface Me {
  principal: {kind: 'user' | 'agent' | 'broker'; id: string; email?: string; displayName?: string; projectId?: string}
  credentialKind: string
  systemAdmin: boolean
  token?: {id: string; projectId: string; permissions: string[]}
}

export interface Project {
  id: string
  name: string
  slug: string
  gitRemote: string | null
  description: string
  createdBy: string
  createdAt: string
  updatedAt: string
  role: string | null
}

export interface AccessTokenView {
  id: string
  name: string
  projectId: string
  permissions: string[]
  prefix: string
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
  status: string
}
