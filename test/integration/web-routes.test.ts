import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'

/** The web client's routes: its files, the WebSocket origin guard, the form layout (sign-in links: web-sign-in.test.ts). */
describe('web routes', () => {
  let hub: TestHub
  beforeAll(async () => {
    hub = await startTestHub('sqlite')
  })
  afterAll(async () => {
    await hub?.dispose()
  })

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
