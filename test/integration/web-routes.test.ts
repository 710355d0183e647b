import {execFile} from 'node:child_process'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'

const SAME_ORIGIN = {host: '127.0.0.1:9810', origin: 'http://127.0.0.1:9810', 'sec-fetch-site': 'same-origin'}

/** The web client's routes: its files, the workstation dev sign-in and its guards, the form layout. */
describe('web routes', () => {
  let hub: TestHub
  let hosted: TestHub
  beforeAll(async () => {
    hub = await startTestHub('sqlite')
    hosted = await startTestHub('sqlite', {flags: {hosted: true}})
  })
  afterAll(async () => {
    await hub?.dispose()
    await hosted?.dispose()
  })

  const devSession = (target: TestHub, headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
    target.app.inject({method: 'POST', url: '/api/v1/auth/dev-session', headers: {'content-type': 'application/json', ...headers}, payload: '{}', remoteAddress})

  it('serves the client at / with a strict content security policy, and its hashed assets', async () => {
    const page = await hub.app.inject({method: 'GET', url: '/'})
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)![1]
    const js = await hub.app.inject({method: 'GET', url: script})
    expect(js.statusCode).toBe(200)
    expect(js.headers['content-type']).toMatch(/^text\/javascript/)
    expect(js.headers['cache-control']).toContain('immutable')
    expect((await hub.app.inject({method: 'GET', url: '/assets/nope.js'})).statusCode).toBe(404)
  })

  it('signs a same-origin loopback browser in as the dev user with a web session', async () => {
    expect((await hub.app.inject({method: 'GET', url: '/api/v1/auth/dev-session'})).json()).toEqual({available: true})
    const r = await devSession(hub, SAME_ORIGIN)
    expect(r.statusCode).toBe(200)
    const cookie = r.cookies.find((c) => c.name === 'svc_session')!
    expect(cookie).toMatchObject({httpOnly: true, sameSite: 'Strict', path: '/'})
    const me = await hub.request('GET', '/api/v1/admin/status', {token: null, headers: {cookie: `svc_session=${cookie.value}`}})
    expect(me.body).toMatchObject({principal: {kind: 'user', id: 'dev-user'}, credentialKind: 'session', systemAdmin: true})
  })

  // Needs root to act as another account (CI runs as root); the parsing is unit-tested apart.
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)('refuses dev sign-in to another OS account on this machine over real loopback', async () => {
    await hub.app.listen({port: 0, host: '127.0.0.1'})
    const port = (hub.app.server.address() as {port: number}).port
    const post = (uid?: number) =>
      new Promise<{status: number; body: string}>((resolve, reject) => {
        const script = `const r = require('http').request({host: '127.0.0.1', port: ${port}, method: 'POST', path: '/api/v1/auth/dev-session', headers: {'content-type': 'application/json', host: '127.0.0.1:${port}', origin: 'http://127.0.0.1:${port}'}}, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => console.log(JSON.stringify({status: res.statusCode, body: b}))) }); r.end('{}')`
        execFile(process.execPath, ['-e', script], {uid, env: {PATH: process.env.PATH}}, (err, out) => (err ? reject(err) : resolve(JSON.parse(out))))
      })
    const other = await post(65534)
    expect(other.status).toBe(403)
    expect(JSON.parse(other.body).error.message).toMatch(/OS user that runs the Hub/)
    expect((await post()).status).toBe(200)
  })

  it('refuses dev sign-in across sites, at a non-loopback name, from another host, and on hosted Hubs', async () => {
    const cases: Array<[Record<string, string>, string, number, string]> = [
      [{host: '127.0.0.1:9810'}, '127.0.0.1', 403, 'forbidden'],
      [{...SAME_ORIGIN, 'sec-fetch-site': 'cross-site', origin: 'http://evil.example'}, '127.0.0.1', 403, 'forbidden'],
      [{host: '127.0.0.1:9810', origin: 'http://127.0.0.1:3000'}, '127.0.0.1', 403, 'forbidden'],
      [{...SAME_ORIGIN, host: 'rebound.evil.example:9810', origin: 'http://rebound.evil.example:9810'}, '127.0.0.1', 403, 'forbidden'],
      [SAME_ORIGIN, '192.0.2.7', 403, 'not_loopback'],
    ]
    for (const [headers, addr, status, code] of cases) {
      const r = await devSession(hub, headers, addr)
      expect({status: r.statusCode, code: r.json().error.code, cookie: r.headers['set-cookie'] ?? null}, JSON.stringify(headers)).toEqual({status, code, cookie: null})
    }
    expect((await hosted.app.inject({method: 'GET', url: '/api/v1/auth/dev-session'})).json()).toEqual({available: false})
    expect((await devSession(hosted, SAME_ORIGIN)).statusCode).toBe(404)
  })

  it('refuses a cross-origin WebSocket upgrade that carries the session cookie', async () => {
    const admin = await createUser(hub, {systemAdmin: true})
    const r = await hub.app.inject({
      method: 'GET',
      url: '/api/v1/agents/any/attach',
      headers: {cookie: `svc_session=${admin.token}`, host: '127.0.0.1:9810', origin: 'http://127.0.0.1:3000', upgrade: 'websocket', connection: 'Upgrade'},
    })
    expect(r.statusCode).toBe(403)
    expect(r.json().error.message).toContain('cross-origin WebSocket')
  })

  it('gives admins the settings form layout: every Layer-1 key with its section, read-only keys marked', async () => {
    const r = await hub.request('GET', '/api/v1/admin/server-config/layout')
    expect(r.status).toBe(200)
    const byKey = new Map<string, any>(r.body.fields.map((f: any) => [f.key, f]))
    expect(byKey.get('server.hub.hub_name')).toMatchObject({layer: 1, section: 'hub', kind: 'string', readOnly: false})
    expect(byKey.get('quotas.max_agents_per_project')).toMatchObject({layer: 1, section: 'quotas', kind: 'int'})
    expect(byKey.get('default_agent_role')).toMatchObject({section: 'agent_defaults', readOnly: true})
    expect(byKey.get('server.hub.port')).toMatchObject({layer: 0, section: null})
    expect(byKey.get('server.hub.host')).toMatchObject({readOnly: true})
    const sections = new Set(r.body.fields.filter((f: any) => f.layer === 1).map((f: any) => f.section))
    const view = (await hub.request('GET', '/api/v1/admin/server-config')).body
    for (const s of Object.keys(view.sections)) expect(sections.has(s), s).toBe(true)
    const user = await createUser(hub)
    expect((await hub.request('GET', '/api/v1/admin/server-config/layout', {token: user.token})).status).toBe(403)
  })
})
