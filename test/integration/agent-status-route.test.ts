import {afterAll, beforeAll, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'

/**
 * The status route runs outside the Hub's generic hooks (app.ts, routes/agent-status.ts) and
 * resolves its caller, parses, validates and gates by itself: it must answer exactly as every
 * other route does. Request IDs, the error envelope for bad bodies (nothing stored), the session
 * cookie's same-origin rule, and the throttle on refused credentials. (Maintenance: settings-admin;
 * a broker's signature: brokers-registration; revocations: agent-token-revocation.)
 */
describeEachDialect('agents: the status route answers as every route does', (dialect) => {
  let hub: FakeBrokerHub
  let id: string
  let token: string

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect, {limits: {authFailuresPerWindow: 3, authFailureWindowMs: 60_000}})
    id = (await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name: 'route', harnessConfig: 'shell'}})).body.agent.id
    token = hub.tokenOf(id)
  })
  afterAll(() => hub?.dispose())

  const post = (opts: {url?: string; headers?: Record<string, string>; payload?: string; auth?: string | null}) =>
    hub.app.inject({
      method: 'POST',
      url: opts.url ?? `/api/v1/agents/${id}/status`,
      headers: {'content-type': 'application/json', ...(opts.auth !== null && {authorization: `Bearer ${opts.auth ?? token}`}), ...opts.headers},
      payload: opts.payload ?? JSON.stringify({activity: 'executing', detail: 'fine'}),
    })
  const stored = async () => (await hub.store.agents.get(id))?.detail

  it('answers {ok: true} as JSON with a request ID (the caller\'s own when well formed); both route forms store the report', async () => {
    const r = await post({payload: JSON.stringify({activity: 'executing', detail: 'first'})})
    expect(r.statusCode).toBe(200)
    expect(r.json()).toEqual({ok: true})
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(r.headers['x-request-id']).toMatch(/^req_[0-9a-f]{16}$/)
    expect(await stored()).toBe('first')
    const traced = await post({headers: {'x-request-id': 'trace-42'}, url: `/api/v1/projects/default/agents/${id}/status`, payload: JSON.stringify({detail: 'second'})})
    expect([traced.statusCode, traced.headers['x-request-id']]).toEqual([200, 'trace-42'])
    expect(await stored()).toBe('second')
  })

  it('a bad body answers the envelope with the request ID and stores nothing', async () => {
    const cases: Array<[Parameters<typeof post>[0], number, string]> = [
      [{payload: '{"detail": '}, 400, 'invalid_request'],
      [{payload: ''}, 400, 'invalid_request'],
      [{payload: JSON.stringify({detail: 'x', colour: 'red'})}, 400, 'validation_error'],
      [{payload: JSON.stringify({detail: 7})}, 400, 'validation_error'],
      [{payload: JSON.stringify({activity: 'dancing'})}, 400, 'validation_error'],
      [{payload: '[['.repeat(100) + ']]'.repeat(100)}, 400, 'validation_error'],
      [{payload: '<detail/>', headers: {'content-type': 'application/xml'}}, 415, 'unsupported_media_type'],
      [{payload: JSON.stringify({detail: 'x'.repeat(1024 * 1024)})}, 413, 'payload_too_large'],
    ]
    for (const [opts, status, code] of cases) {
      const r = await post(opts)
      expect([r.statusCode, r.json().error.code], opts.payload?.slice(0, 40)).toEqual([status, code])
      expect(r.json().error.requestId).toBe(r.headers['x-request-id'])
    }
    expect(await stored()).toBe('second')
  })

  it('a session cookie reports from the Hub\'s own pages only', async () => {
    const {token: session} = await hub.services.sessions.create('dev-user', 'web')
    const cookie = `svc_session=${session}`
    const crossSite = await post({auth: null, headers: {cookie, host: 'hub.test', origin: 'https://elsewhere.test'}, payload: JSON.stringify({detail: 'cross-site'})})
    expect([crossSite.statusCode, crossSite.json().error.code]).toEqual([403, 'forbidden'])
    expect(await stored()).toBe('second')
    const own = await post({auth: null, headers: {cookie, host: 'hub.test', origin: 'http://hub.test'}, payload: JSON.stringify({detail: 'from the page'})})
    expect(own.statusCode).toBe(200)
    expect(await stored()).toBe('from the page')
  })

  // Last: it leaves this Hub throttling the test's address.
  it('refused credentials count against the address: past the limit 429, a valid token too', async () => {
    const refused = [
      {auth: null},
      {auth: 'svc_agt_' + '0'.repeat(64)},
      {auth: null, headers: {authorization: 'Basic Zm9vOmJhcg=='}},
    ]
    for (const opts of refused) {
      const r = await post({...opts, payload: JSON.stringify({detail: 'forged'})})
      expect([r.statusCode, r.json().error.code]).toEqual([401, 'unauthorized'])
    }
    const again = await post({auth: null, headers: {authorization: 'Basic Zm9vOmJhcg=='}, payload: JSON.stringify({detail: 'forged'})})
    expect([again.statusCode, again.json().error.code]).toEqual([429, 'quota_exceeded'])
    const throttled = await post({payload: JSON.stringify({detail: 'throttled'})})
    expect([throttled.statusCode, throttled.json().error.code]).toEqual([429, 'quota_exceeded'])
    expect(await stored()).toBe('from the page')
  })
})
