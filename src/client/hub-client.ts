import type {AccessTokenDto, ArtifactView, DeviceStartDto, ProjectDto} from '../api/dto.js'
import type {AgentEventDto} from '../api/agent-event.js'
import {followAgentEvents} from './event-stream.js'
import {requestJson, type RequestOptions} from './http.js'
import type {Progress} from './transfer.js'

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
  registerProject(body: {name: string; gitRemote?: string | null; localPath?: string}) {
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

  /** Sign-in (no credential needed): the Hub's OpenID provider, or null when sign-in is not configured. */
  signInProviders() {
    return this.call<{oidc: {issuer: string; deviceFlow: boolean} | null}>('GET', '/api/v1/auth/providers')
  }
  /** Redeems the one-time code the CLI's loopback received, with the PKCE verifier. */
  exchangeCliCode(body: {code: string; verifier: string}) {
    return this.call<SignedIn>('POST', '/api/v1/auth/cli/token', body)
  }
  startDeviceLogin() {
    return this.call<DeviceLogin>('POST', '/api/v1/auth/device', {})
  }
  /** One poll; throws `authorization_pending` or `slow_down` until the user approves. */
  pollDeviceLogin(deviceCode: string) {
    return this.call<SignedIn>('POST', '/api/v1/auth/device/token', {deviceCode})
  }
  /** Revokes the session this client presents. */
  logout() {
    return this.call<{signedOut: boolean}>('POST', '/api/v1/auth/logout', {})
  }

  getArtifact(id: string, seq?: number) {
    return this.call<ArtifactResult>('GET', `/api/v1/artifacts/${encodeURIComponent(id)}${seq ? `/versions/${seq}` : ''}`)
  }
  /**
   * Streams a file to the Hub as a new artifact (or, with `artifactId`, its next version).
   * transfer.ts is loaded here, not with the client: its crypto, fs and stream modules are a
   * cost of every command's start (an agent's create among them) that only uploads and downloads use.
   */
  async publishArtifact(file: string, size: number, q: {name: string; title?: string; scope?: string; artifactId?: string}, sha256: string, onProgress?: Progress) {
    const {uploadFile} = await import('./transfer.js')
    const params = new URLSearchParams({name: q.name, ...(q.title && {title: q.title}), ...(q.scope && {scope: q.scope})})
    const path = q.artifactId ? `/api/v1/artifacts/${encodeURIComponent(q.artifactId)}/versions` : '/api/v1/artifacts'
    return uploadFile<ArtifactResult>('POST', `${this.base}${path}?${params}`, file, size, {token: this.token, headers: {'x-content-sha256': sha256}, onProgress})
  }
  /** Downloads one file of an artifact version into `dest` (created exclusively). */
  async downloadArtifactFile(id: string, seq: number, path: string, dest: string, onProgress?: Progress) {
    const {downloadToFile} = await import('./transfer.js')
    const url = `${this.base}/api/v1/artifacts/${encodeURIComponent(id)}/versions/${seq}/files/${path.split('/').map(encodeURIComponent).join('/')}`
    return downloadToFile(url, dest, {token: this.token, onProgress})
  }

  /** Follows `GET /api/v1/events` (query: `agentId`, `projectId`), reconnecting with Last-Event-ID. */
  followEvents(query: {agentId?: string; projectId?: string}, onEvent: (e: AgentEventDto) => void, onConnected?: () => Promise<void> | void) {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v) as Array<[string, string]>).toString()
    return followAgentEvents(`${this.base}/api/v1/events${qs ? `?${qs}` : ''}`, this.token, onEvent, onConnected)
  }

  private get base() {
    return this.endpoint.replace(/\/+$/, '')
  }
}

export interface SignedIn {
  token: string
  expiresAt: string
  user: {id: string; email: string; displayName: string; systemAdmin: boolean}
}

export type DeviceLogin = DeviceStartDto

export interface Me {
  principal: {kind: 'user' | 'agent' | 'broker'; id: string; email?: string; displayName?: string; projectId?: string}
  credentialKind: string
  systemAdmin: boolean
  token?: {id: string; projectId: string; permissions: string[]}
}

export type {ArtifactManifestEntry} from '../api/dto.js'
export type ArtifactResult = ArtifactView

export type Project = ProjectDto

export type AccessTokenView = AccessTokenDto
