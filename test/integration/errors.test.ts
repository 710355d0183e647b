import pino from 'pino'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'
import {TunnelRegistry} from '../../src/server/tunnel/tunnel-registry.js'
import {agentSettingsFromTree} from '../../src/domain/agents/agent-settings.js'

const REQ_ID = /^req_[0-9a-f]{16}$/

/** Every error body is the envelope, and its requestId is the x-request-id header. */
function expectEnvelope(res: {status: number; body: any; headers: Record<string, unknown>}, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  expect(Object.keys(res.body)).toEqual(['error'])
  expect(res.body.error).toMatchObject({code, message: expect.any(String), requestId: res.headers['x-request-id']})
  expect(Object.keys(res.body.error).every((k) => ['code', 'message', 'details', 'requestId'].includes(k))).toBe(true)
  expect(res.body.error.message.length).toBeGreaterThan(0)
}

describeEachDialect('the error envelope', (dialect) => {
  let hub: TestHub
  let alice: TestUser
  beforeAll(async () => {
    hub = await startTestHub(dialect)
    alice = await createUser(hub)
  })
  afterAll(() => hub?.dispose())

  it('every kind of error carries code, message and the request ID of the response', async () => {
    expectEnvelope(await hub.request('GET', '/api/v1/projects', {token: null}), 401, 'unauthorized')
    expectEnvelope(await hub.request('GET', '/api/v1/nope'), 404, 'not_found')
    expectEnvelope(await hub.request('GET', '/api/v1/projects/missing'), 404, 'not_found')
    expectEnvelope(await hub.request('GET', '/api/v1/users', {token: alice.token}), 403, 'forbidden')
    expectEnvelope(await hub.request('POST', '/api/v1/projects/register', {body: {name: 5}}), 400, 'validation_error')
    const res = await hub.request('GET', '/api/v1/nope')
    expect(res.body.error.requestId).toMatch(REQ_ID)
  })

  it('a well-formed incoming X-Request-Id is kept; a malformed one is replaced', async () => {
    const kept = await hub.request('GET', '/api/v1/nope', {headers: {'x-request-id': 'client-abc.123'}})
    expect(kept.headers['x-request-id']).toBe('client-abc.123')
    expect(kept.body.error.requestId).toBe('client-abc.123')
    const replaced = await hub.request('GET', '/api/v1/nope', {headers: {'x-request-id': 'bad id with spaces'}})
    expect(replaced.headers['x-request-id']).toMatch(REQ_ID)
  })

  it('wrong types, missing and unknown fields are 400 validation_error listing each failing field', async () => {
    const res = await hub.request('POST', '/api/v1/projects/register', {body: {name: 5, gitRemote: 7, extra: true}})
    expectEnvelope(res, 400, 'validation_error')
    const fields = res.body.error.details.fields as Array<{path: string; message: string}>
    expect(fields.map((f) => f.path).sort()).toEqual(['body.extra', 'body.gitRemote', 'body.name'])
    expect(fields.find((f) => f.path === 'body.extra')!.message).toBe('is not a known field')
    const missing = await hub.request('POST', '/api/v1/auth/tokens', {body: {name: 'x'}})
    expectEnvelope(missing, 400, 'validation_error')
    expect(missing.body.error.details.fields).toEqual(
      expect.arrayContaining([
        {path: 'body.projectId', message: 'is required'},
        {path: 'body.permissions', message: 'is required'},
      ]),
    )
    // No type coercion of bodies: "true" is not a boolean.
    const coerced = await hub.request('PATCH', `/api/v1/users/${alice.user.id}`, {body: {systemAdmin: 'true'}})
    expectEnvelope(coerced, 400, 'validation_error')
    expect(coerced.body.error.details.fields[0].path).toBe('body.systemAdmin')
  })

  it('invalid JSON and an empty JSON body are 400 invalid_request', async () => {
    const bad = await hub.request('POST', '/api/v1/projects/register', {body: '{"name": ', headers: {'content-type': 'application/json'}})
    expectEnvelope(bad, 400, 'invalid_request')
    const empty = await hub.request('POST', '/api/v1/projects/register', {body: '', headers: {'content-type': 'application/json'}})
    expectEnvelope(empty, 400, 'invalid_request')
  })

  it('another content type is 415 unsupported_media_type; an oversized body 413 payload_too_large', async () => {
    expectEnvelope(await hub.request('POST', '/api/v1/projects/register', {body: 'name=x', headers: {'content-type': 'application/x-www-form-urlencoded'}}), 415, 'unsupported_media_type')
    const big = JSON.stringify({name: 'x', description: 'y'.repeat(2 * 1024 * 1024)})
    expectEnvelope(await hub.request('POST', '/api/v1/projects/register', {body: big, headers: {'content-type': 'application/json'}}), 413, 'payload_too_large')
  })

  describe('session cookie', () => {
    const cookieReq = (method: string, url: string, headers: Record<string, string>, body?: unknown) =>
      hub.request(method, url, {token: null, body, headers: {cookie: `svc_session=${alice.token}`, ...headers}})

    it('authenticates safe requests from anywhere', async () => {
      const res = await cookieReq('GET', '/api/v1/auth/me', {origin: 'https://evil.example'})
      expect([res.status, res.body.credentialKind]).toEqual([200, 'session'])
    })

    it.each([
      ['another origin', {origin: 'https://evil.example'}],
      ['Sec-Fetch-Site cross-site', {'sec-fetch-site': 'cross-site'}],
      ['an opaque origin', {origin: 'null'}],
      ['no origin at all', {}],
    ])('refuses a state-changing request from %s with 403 forbidden', async (_name, headers) => {
      const res = await cookieReq('POST', '/api/v1/projects/register', headers, {name: 'csrf'})
      expectEnvelope(res, 403, 'forbidden')
    })

    it('accepts a state-changing request from the Hub\'s own origin', async () => {
      const sameOrigin = await cookieReq('POST', '/api/v1/projects/register', {origin: 'http://localhost:80'}, {name: 'same-origin'})
      expect(sameOrigin.status).toBe(201)
      const fetchMeta = await cookieReq('POST', '/api/v1/projects/register', {'sec-fetch-site': 'same-origin'}, {name: 'same-origin-2'})
      expect(fetchMeta.status).toBe(201)
    })

    it('a bearer token is not subject to the origin check', async () => {
      const res = await hub.request('POST', '/api/v1/projects/register', {token: alice.token, body: {name: 'bearer'}, headers: {origin: 'https://evil.example'}})
      expect(res.status).toBe(201)
    })
  })

  describe('an unexpected error', () => {
    let other: TestHub
    const lines: string[] = []
    beforeAll(async () => {
      // A Hub whose log we read, with one route that fails; routes can be added until the first request.
      other = await startTestHub(dialect, {logger: pino({level: 'error'}, {write: (s: string) => lines.push(s)})})
      other.app.get('/api/v1/test/boom', async () => {
        throw new Error('connect ECONNREFUSED postgres://admin:hunter2@db.internal:5432 at /srv/hub/store.ts:42')
      })
    })
    afterAll(() => other?.dispose())

    it('is 500 internal_error whose message leaks nothing; the log has it under the request ID', async () => {
      const res = await other.request('GET', '/api/v1/test/boom')
      const body = res.body
      expectEnvelope(res, 500, 'internal_error')
      for (const secret of ['hunter2', 'ECONNREFUSED', 'db.internal', 'store.ts', 'postgres://']) expect(JSON.stringify(body)).not.toContain(secret)
      expect(body.error).not.toHaveProperty('details')
      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.reqId === body.error.requestId)
      expect(logged).toBeDefined()
      expect(JSON.stringify(logged)).toContain('hunter2')
    })
  })
})
