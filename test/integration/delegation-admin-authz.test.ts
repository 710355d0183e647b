import type {FastifyInstance} from 'fastify'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {signRequest} from '../../src/api/broker-signing.js'
import {userPrincipal} from '../../src/domain/auth/credentials.js'
import {buildApp} from '../../src/server/app.js'
import {iso} from '../../src/domain/shared/clock.js'
import {ADOPTION, legacyAgents, newProject} from '../helpers/adoption.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'

type Caller = {token?: string | null; headers?: (method: string, url: string, body: string) => Record<string, string>; app?: FastifyInstance}

/**
 * SPEC "Authentication" 3: every delegation adoption route needs a system admin on an
 * interactive session or the dev credential. Every route x every credential kind the Hub
 * resolves: the kind is refused first (`credential_kind_not_allowed`, even for an admin's user
 * access token or a broker naming an admin), then a non-admin session is `not_system_admin`.
 * The Hub itself resolves no federated credential yet, so the federated caller goes through the
 * real app built with one extra resolver (a trusted identity provider's token for the admin).
 */
describeEachDialect('delegation adoption admin: authorization matrix', (dialect) => {
  let hub: TestHub
  let projectId: string
  let federatedApp: FastifyInstance | undefined
  const callers: Record<string, Caller> = {}

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    projectId = await newProject(hub, 'matrix')
    const admin = await createUser(hub, {systemAdmin: true})
    const plain = await createUser(hub)
    await hub.store.projects.setMember(projectId, admin.user.id, 'owner', iso(new Date()))
    const pat = await hub.request('POST', '/api/v1/auth/tokens', {token: admin.token, body: {name: 'ci', projectId, permissions: ['project.read', 'agent.read']}})
    expect(pat.status, JSON.stringify(pat.body)).toBe(201)
    const [agentId] = await legacyAgents(hub, [{projectId, by: admin.user.id}])
    const agentToken = (await hub.services.agentTokens.mint({id: agentId, role: 'full'})).token
    const reg = await hub.request('POST', '/api/v1/brokers/register', {body: {name: 'matrix-broker'}})
    const {brokerId, secret} = (await hub.request('POST', '/api/v1/brokers/join', {body: {joinToken: reg.body.joinToken}, token: null})).body
    // The same services and routes; the credential resolver also knows one federated token.
    const federatedToken = 'federated-admin-token'
    const adminRow = (await hub.store.users.get(admin.user.id))!
    const authenticate: typeof hub.services.authenticate = async (secret) =>
      secret === federatedToken ? {principal: userPrincipal(adminRow), credentialKind: 'federated'} : hub.services.authenticate(secret)
    federatedApp = await buildApp({services: {...hub.services, authenticate}, logger: hub.logger, tunnels: hub.tunnels})
    Object.assign(callers, {
      'session (admin)': {token: admin.token},
      dev: {token: hub.devToken},
      'session (not admin)': {token: plain.token},
      'user_access_token (admin)': {token: pat.body.token},
      agent: {token: agentToken},
      broker: {token: null, headers: (m: string, u: string, b: string) => signRequest(brokerId, secret, m, u, b)},
      'broker_for_user (admin)': {token: null, headers: (m: string, u: string, b: string) => signRequest(brokerId, secret, m, u, b, {forUser: admin.user.id})},
      'federated (admin)': {token: federatedToken, app: federatedApp},
    })
  })
  afterAll(async () => {
    await federatedApp?.close()
    await hub?.dispose()
  })

  const expected: Record<string, string | null> = {
    'session (admin)': null,
    dev: null,
    'session (not admin)': 'not_system_admin',
    'user_access_token (admin)': 'credential_kind_not_allowed',
    agent: 'credential_kind_not_allowed',
    broker: 'credential_kind_not_allowed',
    'broker_for_user (admin)': 'credential_kind_not_allowed',
    'federated (admin)': 'credential_kind_not_allowed',
  }

  async function send(c: Caller, method: 'GET' | 'POST', url: string, body?: unknown) {
    const text = body === undefined ? '' : JSON.stringify(body)
    const res = await (c.app ?? hub.app).inject({
      method,
      url,
      headers: {...(c.token && {authorization: `Bearer ${c.token}`}), ...c.headers?.(method, url, text), ...(body !== undefined && {'content-type': 'application/json'})},
      ...(body !== undefined && {payload: text}),
    })
    return {status: res.statusCode, body: res.json()}
  }

  it('every route x every credential kind', async () => {
    // An empty project: an allowed caller's commit passes the gate and stops at 422 empty_plan.
    const empty = await newProject(hub, 'matrix-empty')
    const adopt = {operation: 'adopt', scope: {projectId: empty}}
    const fingerprint = (await hub.request('POST', `${ADOPTION}/previews`, {body: adopt})).body.planFingerprint
    const routes: Array<[string, 'GET' | 'POST', string, unknown, number]> = [
      ['status', 'GET', ADOPTION, undefined, 200],
      ['preview', 'POST', `${ADOPTION}/previews`, adopt, 200],
      ['commit', 'POST', `${ADOPTION}/commits`, {...adopt, planFingerprint: fingerprint}, 422],
    ]
    for (const [route, method, url, body, okStatus] of routes) {
      for (const [kind, caller] of Object.entries(callers)) {
        const r = await send(caller, method, url, body)
        const want = expected[kind]
        if (want === null) expect(r.status, `${route} as ${kind}: ${JSON.stringify(r.body)}`).toBe(okStatus)
        else {
          expect(r.status, `${route} as ${kind}`).toBe(403)
          expect(r.body.error.code, `${route} as ${kind}`).toBe(want)
        }
      }
      expect((await send({token: null}, method, url, body)).status, `${route} unauthenticated`).toBe(401)
    }
    // Every refused credential, bearer or broker-signed, is refused before its query or body is
    // validated (403, not 400).
    for (const [kind, want] of Object.entries(expected)) {
      if (want === null) continue
      const r = await send(callers[kind], 'POST', `${ADOPTION}/commits`, {operation: 'nonsense'})
      expect(r.status, `${kind}: ${JSON.stringify(r.body)}`).toBe(403)
      expect(r.body.error.code, kind).toBe(want)
      const q = await send(callers[kind], 'GET', `${ADOPTION}?limit=501`)
      expect(q.status, `${kind}: ${JSON.stringify(q.body)}`).toBe(403)
      expect(q.body.error.code, kind).toBe(want)
    }
    expect((await send(callers.dev, 'POST', `${ADOPTION}/commits`, {operation: 'nonsense'})).body.error.code).toBe('validation_error')
    // Nothing was adopted by any refused caller: the legacy agent's edge is still unrecorded.
    expect((await hub.store.delegationEdges.listActive()).filter((e) => e.projectId === projectId).every((e) => e.provenanceVersion === 0)).toBe(true)
  })
})
