import {createHash} from 'node:crypto'
import http from 'node:http'
import pino from 'pino'
import {creationCeiling} from '../../src/domain/delegation/record-edge.js'
import {createAgentTokens} from '../../src/domain/agents/agent-tokens.js'
import {createSessions} from '../../src/domain/auth/sessions.js'
import type {HubConfig} from '../../src/domain/hub-config.js'
import {iso, systemClock} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import type {Store} from '../../src/store/store.js'
import type {TestHub} from './hub.js'

export const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
  json: any
}

/** Listens on a free loopback port (real HTTP: streaming, early answers, aborts). */
export async function listen(hub: TestHub): Promise<string> {
  await hub.app.listen({host: '127.0.0.1', port: 0})
  const addr = hub.app.server.address() as {port: number}
  return `http://127.0.0.1:${addr.port}`
}

/** One request over node:http; `body` is sent as is (a Buffer, or chunks when `chunked`). */
export function rawRequest(method: string, url: string, opts: {token?: string | null; headers?: Record<string, string>; body?: Buffer; chunked?: boolean} = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {...opts.headers}
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    if (opts.body && !opts.chunked && headers['content-length'] === undefined) headers['content-length'] = String(opts.body.length)
    const req = http.request(url, {method, headers}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        let json: unknown
        try {
          json = JSON.parse(body.toString('utf8'))
        } catch {
          json = undefined
        }
        resolve({status: res.statusCode ?? 0, headers: res.headers, body, json})
      })
      res.on('error', reject)
    })
    // An early answer (413, 403) may close the connection before the body is all sent.
    req.on('error', (err) => reject(err))
    if (opts.body && opts.chunked) {
      const size = 64 * 1024
      for (let i = 0; i < opts.body.length; i += size) req.write(opts.body.subarray(i, i + size))
      req.end()
    } else req.end(opts.body)
  })
}

/** A user with an interactive session on the Hub. */
export async function makeUser(hub: TestHub, name: string): Promise<{id: string; email: string; token: string}> {
  const email = `${name}-${newId().slice(0, 6)}@example.test`
  const user = await hub.store.users.insert({id: newId(), email, displayName: name, systemAdmin: false, now: iso(new Date())})
  const sessions = createSessions({store: hub.store, clock: systemClock, logger: hub.logger, config: hub.config})
  const {token} = await sessions.create(user.id, 'cli')
  return {id: user.id, email, token}
}

/**
 * An agent of `projectId` with a real agent token minted from `role` (its scopes follow the
 * role: readonly reads artifacts, baseline and full also publish, none gets no scope).
 */
export async function makeAgent(store: Store, projectId: string, role: string, id: string = newId()): Promise<{id: string; token: string}> {
  const t = iso(new Date())
  await store.agents.insert({
    id,
    projectId,
    name: `agent-${id.slice(0, 6)}`,
    brokerId: null,
    phase: 'running',
    activity: 'idle',
    detail: '',
    harnessConfig: 'test',
    template: null,
    task: null,
    role,
    runtime: null,
    runtimeRef: null,
    config: {},
    error: null,
    createdBy: {kind: 'user', id: 'dev-user'},
    createdAt: t,
    updatedAt: t,
  })
  // Its delegation edge, as a creation by the dev user records it: agents' permissions walk it.
  await store.delegationEdges.insert({
    id: newId(), delegateAgentId: id, projectId, delegator: {kind: 'user', id: 'dev-user'}, role, provenanceVersion: 1, sourceCredentialKind: 'dev',
    ceiling: JSON.stringify(creationCeiling(role, null)), ceilingPolicy: null, ceilingProjectId: null, initiator: null, createdAt: t,
  })
  const tokens = createAgentTokens({store, clock: systemClock, logger: pino({level: 'silent'}), config: {} as HubConfig})
  const {token} = await tokens.mint({id, role})
  return {id, token}
}
