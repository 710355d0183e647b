import {afterAll, beforeAll, expect, it} from 'vitest'
import {makeAgent} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * An agent's own token reads its own project (`project.read` is in every V1 role), so `svc
 * project get` works inside an agent; other projects stay invisible and writes stay refused.
 */
describeEachDialect("an agent token reads its own project", (dialect) => {
  let hub: TestHub
  let home: {id: string; slug: string}
  let other: string

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    home = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'agent-home'}})).body.project
    other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'agent-elsewhere'}})).body.project.id
  })
  afterAll(() => hub?.dispose())

  it('GET the project, its settings and resolved settings answer 200, by ID and by slug', async () => {
    const agent = await makeAgent(hub.store, home.id, 'readonly')
    for (const ref of [home.id, home.slug]) {
      const p = await hub.request('GET', `/api/v1/projects/${ref}`, {token: agent.token})
      expect(p.status, JSON.stringify(p.body)).toBe(200)
      expect(p.body.project).toMatchObject({id: home.id, slug: home.slug})
      const s = await hub.request('GET', `/api/v1/projects/${ref}/settings`, {token: agent.token})
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      expect(s.body).toHaveProperty('settings')
      const r = await hub.request('GET', `/api/v1/projects/${ref}/settings/resolved`, {token: agent.token})
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(r.body).toHaveProperty('settings')
    }
    expect((await hub.request('GET', `/api/v1/groves/${home.id}`, {token: agent.token})).status).toBe(200)
  })

  it('another project is 404; writes to its own project are 403 and change nothing; no scope is 404', async () => {
    const agent = await makeAgent(hub.store, home.id, 'full')
    const o = await hub.request('GET', `/api/v1/projects/${other}`, {token: agent.token})
    expect(o.status).toBe(404)
    expect(o.body.error.code).toBe('not_found')
    expect((await hub.request('GET', `/api/v1/projects/${other}/settings`, {token: agent.token})).status).toBe(404)
    const put = await hub.request('PUT', `/api/v1/projects/${home.id}/settings`, {token: agent.token, body: {defaultMaxTurns: 3}})
    expect(put.status).toBe(403)
    expect((await hub.request('GET', `/api/v1/projects/${home.id}/settings`)).body.settings.defaultMaxTurns ?? null).toBeNull()
    const none = await makeAgent(hub.store, home.id, 'none')
    expect((await hub.request('GET', `/api/v1/projects/${home.id}`, {token: none.token})).status).toBe(404)
  })
})
