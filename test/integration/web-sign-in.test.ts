import {afterAll, beforeAll, expect, it} from 'vitest'
import {makeAgent} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'
import type {Clock} from '../../src/domain/shared/clock.js'

/**
 * One-time sign-in links (`svc web`): the only way a workstation browser gets a session. A link
 * works once, for a minute, lands only on a page of the Hub, and only a person's own credential
 * (dev credential or session) can ask for one.
 */
describeEachDialect('web sign-in links', (dialect) => {
  let hub: TestHub
  let offsetMs = 0
  const clock: Clock = {now: () => new Date(Date.now() + offsetMs)}
  beforeAll(async () => {
    hub = await startTestHub(dialect, {clock})
  })
  afterAll(() => hub?.dispose())

  const mint = (body: unknown = {}, token?: string | null) => hub.request('POST', '/api/v1/auth/web-sign-in', {body, token})
  const open = (path: string) => hub.app.inject({method: 'GET', url: path})
  const cookieOf = (r: Awaited<ReturnType<typeof open>>) => r.cookies.find((c) => c.name === 'svc_session') ?? null

  it('a link opened once sets the web session cookie of the caller and redirects to its page', async () => {
    const r = await mint({path: '/#/agents'})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    expect(r.headers['cache-control']).toBe('no-store')
    expect(r.body.path).toMatch(/^\/auth\/web\?token=[A-Za-z0-9_-]{43}$/)
    expect(r.body.url).toBe(`${hub.config.publicUrl.replace(/\/+$/, '')}${r.body.path}`)
    const ttl = Date.parse(r.body.expiresAt) - clock.now().getTime()
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
    const first = await open(r.body.path)
    expect(first.statusCode).toBe(303)
    expect(first.headers.location).toBe('/#/agents')
    const cookie = cookieOf(first)!
    expect(cookie).toMatchObject({httpOnly: true, sameSite: 'Strict', path: '/'})
    const status = await hub.request('GET', '/api/v1/admin/status', {token: null, headers: {cookie: `svc_session=${cookie.value}`}})
    expect(status.body).toMatchObject({principal: {kind: 'user', id: 'dev-user'}, credentialKind: 'session', systemAdmin: true})

    const second = await open(r.body.path)
    expect(second.statusCode).toBe(401)
    expect(second.headers['content-type']).toMatch(/^text\/html/)
    expect(second.body).toContain('svc web')
    expect(cookieOf(second)).toBeNull()
  })

  it('a session user gets a link for themself; unknown, missing and expired links are refused', async () => {
    const alice = await createUser(hub)
    const r = await mint({}, alice.token)
    expect(r.status).toBe(201)
    const expired = (await mint()).body.path
    offsetMs = 61_000
    try {
      const late = await open(expired)
      expect({status: late.statusCode, cookie: cookieOf(late)}).toEqual({status: 401, cookie: null})
    } finally {
      offsetMs = 0
    }
    const done = await open(r.body.path)
    expect(done.headers.location).toBe('/')
    const me = await hub.request('GET', '/api/v1/auth/me', {token: null, headers: {cookie: `svc_session=${cookieOf(done)!.value}`}})
    expect(me.body.principal).toMatchObject({id: alice.user.id})
    for (const path of ['/auth/web', '/auth/web?token=', `/auth/web?token=${'A'.repeat(43)}`]) {
      const bad = await open(path)
      expect({path, status: bad.statusCode, cookie: cookieOf(bad)}).toEqual({path, status: 401, cookie: null})
    }
    // A HEAD (a link previewer) is not the page and spends nothing.
    const kept = (await mint()).body.path
    expect((await hub.app.inject({method: 'HEAD', url: kept})).statusCode).toBe(404)
    expect((await open(kept)).statusCode).toBe(303)
  })

  it('an agent, an access token and no credential cannot ask for a link (403/401) and nothing is made', async () => {
    const project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: `links-${dialect}`}})).body.project
    for (const role of ['full', 'readonly'] as const) {
      const agent = await makeAgent(hub.store, project.id, role)
      const r = await mint({}, agent.token)
      expect({role, status: r.status, code: r.body.error?.code}).toEqual({role, status: 403, code: 'forbidden'})
    }
    const owner = await createUser(hub)
    const proj = (await hub.request('POST', '/api/v1/projects/register', {token: owner.token, body: {name: `links-own-${dialect}`}})).body.project
    const pat = await hub.request('POST', '/api/v1/auth/tokens', {token: owner.token, body: {name: 't', projectId: proj.id, permissions: ['project.read']}})
    expect(pat.status, JSON.stringify(pat.body)).toBe(201)
    expect((await mint({}, pat.body.token)).status).toBe(403)
    expect((await mint({}, null)).status).toBe(401)
    // A forged same-origin browser request without a credential is just unauthenticated.
    const forged = await hub.app.inject({
      method: 'POST',
      url: '/api/v1/auth/web-sign-in',
      headers: {'content-type': 'application/json', host: '127.0.0.1:9810', origin: 'http://127.0.0.1:9810', 'sec-fetch-site': 'same-origin'},
      payload: '{}',
      remoteAddress: '127.0.0.1',
    })
    expect(forged.statusCode).toBe(401)
  })

  it('the page a link lands on is a path on this Hub: anything off-site is refused when asked', async () => {
    for (const [path, next] of [
      ['agents/abc', '/#/agents/abc'],
      ['#/settings', '/#/settings'],
      ['/projects/p/artifacts/a?version=2', '/projects/p/artifacts/a?version=2'],
    ]) {
      const r = await mint({path})
      expect(r.status, path).toBe(201)
      expect((await open(r.body.path)).headers.location, path).toBe(next)
    }
    for (const path of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/ok\nLocation: x', 'http:evil.example']) {
      const r = await mint({path})
      expect({path, status: r.status, code: r.body.error?.code}).toEqual({path, status: 400, code: 'validation_error'})
    }
    // A `next` in the link's own query is not read: the page is fixed when the link is made.
    const r = await mint({path: '/#/agents'})
    const opened = await open(`${r.body.path}&next=${encodeURIComponent('https://evil.example/')}`)
    expect(opened.headers.location).toBe('/#/agents')
  })

  it('the loopback dev-session shortcut is gone, whatever headers come with it', async () => {
    const headers = {'content-type': 'application/json', host: '127.0.0.1:9810', origin: 'http://127.0.0.1:9810', 'sec-fetch-site': 'same-origin'}
    const post = await hub.app.inject({method: 'POST', url: '/api/v1/auth/dev-session', headers, payload: '{}', remoteAddress: '127.0.0.1'})
    expect({status: post.statusCode, cookie: post.headers['set-cookie'] ?? null}).toEqual({status: 404, cookie: null})
    expect((await hub.app.inject({method: 'GET', url: '/api/v1/auth/dev-session', remoteAddress: '127.0.0.1'})).statusCode).toBe(404)
  })
})
