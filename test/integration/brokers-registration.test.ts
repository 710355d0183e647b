import {afterAll, beforeAll, expect, it} from 'vitest'
import {MAX_SKEW_SECONDS, SIGNATURE_HEADERS, signRequest} from '../../src/api/broker-signing.js'
import {JOIN_TOKEN_TTL_MS} from '../../src/domain/brokers/brokers-service.js'
import pino from 'pino'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub} from '../../src/main.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {movableClock} from '../helpers/sign-in-hub.js'
import {createUser} from '../helpers/users.js'

/**
 * Two-phase broker registration and signed broker requests (no tunnel here: brokers-tunnel
 * covers it). The clock is the Hub's, moved to expire join tokens.
 */
describeEachDialect('brokers: registration and signed requests', (dialect) => {
  let hub: TestHub
  const clock = movableClock()

  beforeAll(async () => {
    hub = await startTestHub(dialect, {clock})
  })
  afterAll(() => hub?.dispose())

  const register = (name: string, token?: string | null) => hub.request('POST', '/api/v1/brokers/register', {body: {name}, ...(token !== undefined && {token})})
  const join = (joinToken: string) => hub.request('POST', '/api/v1/brokers/join', {body: {joinToken}, token: null})
  const signedMe = (brokerId: string, secret: string, opts: {now?: number} = {}) => {
    const headers = signRequest(brokerId, secret, 'GET', '/api/v1/auth/me', '', opts)
    return {headers, send: () => hub.request('GET', '/api/v1/auth/me', {token: null, headers})}
  }

  it('register answers 201 with a pending broker and a join token shown once; join trades it for the secret, once', async () => {
    const r = await register('edge-1')
    expect(r.status).toBe(201)
    expect(r.body.broker).toMatchObject({name: 'edge-1', status: 'pending', connected: false, colocated: false, agents: 0})
    expect(r.body.joinToken).toMatch(/^svc_join_[0-9a-f]{48}$/)
    expect(Date.parse(r.body.expiresAt) - clock.now().getTime()).toBeGreaterThan(JOIN_TOKEN_TTL_MS - 60_000)

    const j = await join(r.body.joinToken)
    expect(j.status).toBe(200)
    expect(j.body).toEqual({brokerId: r.body.broker.id, secret: expect.stringMatching(/^svc_brk_[0-9a-f]{64}$/)})

    const again = await join(r.body.joinToken)
    expect(again.status).toBe(401)
    expect(again.body.error.code).toBe('unauthorized')
  })

  it('a wrong join token is 401; a join token past its hour is 401', async () => {
    expect((await join('svc_join_' + '0'.repeat(48))).status).toBe(401)
    const r = await register('edge-late')
    clock.advance(JOIN_TOKEN_TTL_MS + 1000)
    try {
      const j = await join(r.body.joinToken)
      expect(j.status).toBe(401)
      expect(j.body.error.message).toMatch(/expired/)
    } finally {
      clock.advance(-(JOIN_TOKEN_TTL_MS + 1000))
    }
  })

  it('only users register brokers; unauthenticated is 401; an empty name is 400', async () => {
    expect((await register('x', null)).status).toBe(401)
    const blank = await register('   ')
    expect(blank.status).toBe(400)
    expect(blank.body.error.code).toBe('validation_error')
  })

  it('a good signature authenticates as credential kind broker on GET /api/v1/auth/me', async () => {
    const r = await register('edge-sign')
    const {brokerId, secret} = (await join(r.body.joinToken)).body
    const me = await signedMe(brokerId, secret).send()
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({principal: {kind: 'broker', id: brokerId}, credentialKind: 'broker', systemAdmin: false})
  })

  it('bad signature, clock skew over 300 s, a replayed nonce, an unknown or unjoined broker: all 401', async () => {
    const r = await register('edge-bad')
    const {brokerId, secret} = (await join(r.body.joinToken)).body

    const bad = signedMe(brokerId, secret)
    bad.headers[SIGNATURE_HEADERS.signature] = bad.headers[SIGNATURE_HEADERS.signature].replace(/^./, (c) => (c === '0' ? '1' : '0'))
    const b = await bad.send()
    expect(b.status).toBe(401)
    expect(b.body.error).toMatchObject({code: 'unauthorized', message: expect.stringMatching(/bad signature/)})

    const wrongSecret = await signedMe(brokerId, 'svc_brk_' + 'a'.repeat(64)).send()
    expect(wrongSecret.status).toBe(401)

    const past = await signedMe(brokerId, secret, {now: Date.now() - (MAX_SKEW_SECONDS + 5) * 1000}).send()
    expect(past.status).toBe(401)
    expect(past.body.error.message).toMatch(/clock skew/)
    const future = await signedMe(brokerId, secret, {now: Date.now() + (MAX_SKEW_SECONDS + 5) * 1000}).send()
    expect(future.status).toBe(401)
    // Inside the window is fine.
    expect((await signedMe(brokerId, secret, {now: Date.now() - 60_000}).send()).status).toBe(200)

    const once = signedMe(brokerId, secret)
    expect((await once.send()).status).toBe(200)
    const replay = await once.send()
    expect(replay.status).toBe(401)
    expect(replay.body.error.message).toMatch(/replayed/)

    const unknown = await signedMe('no-such-broker', secret).send()
    expect(unknown.status).toBe(401)
    expect(unknown.body.error.message).toMatch(/unknown broker/)

    const pending = (await register('edge-never-joined')).body.broker.id
    expect((await signedMe(pending, secret).send()).status).toBe(401)
  })

  it('a signature covers the body: a signed POST with a changed body is refused', async () => {
    const r = await register('edge-body')
    const {brokerId, secret} = (await join(r.body.joinToken)).body
    const body = JSON.stringify({phase: 'running'})
    const headers = signRequest(brokerId, secret, 'POST', '/api/v1/agents/nope/status', body)
    const res = await hub.app.inject({method: 'POST', url: '/api/v1/agents/nope/status', headers: {...headers, 'content-type': 'application/json'}, payload: JSON.stringify({phase: 'stopped'})})
    expect(res.statusCode).toBe(401)
    const ok = await hub.app.inject({method: 'POST', url: '/api/v1/agents/nope/status', headers: {...signRequest(brokerId, secret, 'POST', '/api/v1/agents/nope/status', body), 'content-type': 'application/json'}, payload: body})
    // Authenticated as the broker; the agent does not exist.
    expect(ok.statusCode).toBe(404)
  })

  it('a signed request for a user is credential kind broker_for_user, keeps the broker as principal and gets no user authority', async () => {
    const r = await register('edge-for-user')
    const {brokerId, secret} = (await join(r.body.joinToken)).body
    const admin = await createUser(hub, {systemAdmin: true})
    const me = await hub.request('GET', '/api/v1/auth/me', {token: null, headers: signRequest(brokerId, secret, 'GET', '/api/v1/auth/me', '', {forUser: admin.user.id})})
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({principal: {kind: 'broker', id: brokerId}, credentialKind: 'broker_for_user', systemAdmin: false, forUser: admin.user.id})
    // Naming an admin grants nothing: admin routes refuse the kind.
    const cfg = await hub.request('GET', '/api/v1/admin/server-config', {token: null, headers: signRequest(brokerId, secret, 'GET', '/api/v1/admin/server-config', '', {forUser: admin.user.id})})
    expect(cfg.status).toBe(403)
    // The user ID is signed: changing it breaks the signature.
    const forged = {...signRequest(brokerId, secret, 'GET', '/api/v1/auth/me', '', {forUser: 'someone'}), [SIGNATURE_HEADERS.forUser]: admin.user.id}
    expect((await hub.request('GET', '/api/v1/auth/me', {token: null, headers: forged})).status).toBe(401)
  })

  it('a nonce accepted by one replica is refused as a replay by another replica on the same database', async () => {
    const r = await register('edge-replicas')
    const {brokerId, secret} = (await join(r.body.joinToken)).body
    const other = await createHub(resolveBootstrap({port: 0}, hub.env), {env: hub.env, logger: pino({level: 'silent'}), clock})
    try {
      const headers = signRequest(brokerId, secret, 'GET', '/api/v1/auth/me', '', {now: clock.now().getTime()})
      expect((await hub.request('GET', '/api/v1/auth/me', {token: null, headers})).status).toBe(200)
      const replay = await other.app.inject({method: 'GET', url: '/api/v1/auth/me', headers})
      expect(replay.statusCode).toBe(401)
      expect(replay.json().error.message).toMatch(/replayed/)
    } finally {
      await other.close()
    }
  })

  it('list and get: every user sees brokers with status and capacity; unknown is 404; agents may not', async () => {
    const r = await register('edge-listed')
    const other = await createUser(hub)
    const list = await hub.request('GET', '/api/v1/brokers', {token: other.token})
    expect(list.status).toBe(200)
    const found = list.body.brokers.find((b: {id: string}) => b.id === r.body.broker.id)
    expect(found).toMatchObject({name: 'edge-listed', status: 'pending', connected: false, agents: 0, capabilities: [], runtimes: []})
    expect(found).not.toHaveProperty('secret')
    const get = await hub.request('GET', `/api/v1/brokers/${r.body.broker.id}`)
    expect(get.status).toBe(200)
    expect(get.body.broker).toMatchObject({id: r.body.broker.id, name: 'edge-listed'})
    expect(JSON.stringify(get.body)).not.toMatch(/svc_brk_|secret/)
    expect((await hub.request('GET', '/api/v1/brokers/nope')).body.error.code).toBe('not_found')
    expect((await hub.request('GET', '/api/v1/brokers', {token: null})).status).toBe(401)
  })
})
