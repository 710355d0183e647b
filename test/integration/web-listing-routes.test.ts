import {afterAll, beforeAll, expect, it} from 'vitest'
import {listen, makeUser, rawRequest, sha256} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * The routes the web client's pages read: a project's artifacts with their versions, the Hub's
 * name in the admin status, and the HTML 404 page for browsers (API paths keep the envelope).
 */
describeEachDialect('web listing routes', (dialect) => {
  let hub: TestHub
  let base: string
  type U = {id: string; email: string; token: string}
  let alice: U
  let bob: U
  let carol: U
  let projectA: string

  const get = (token: string | null, path: string, headers: Record<string, string> = {}) => rawRequest('GET', `${base}${path}`, {token, headers})
  const publish = async (path: string, body: Buffer, token = alice.token) => {
    const res = await rawRequest('POST', `${base}${path}`, {token, body, headers: {'content-type': 'application/octet-stream', 'x-content-sha256': sha256(body)}})
    expect(res.status, res.body.toString()).toBe(201)
    return res.json
  }

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    base = await listen(hub)
    alice = await makeUser(hub, 'alice')
    bob = await makeUser(hub, 'bob')
    carol = await makeUser(hub, 'carol')
    projectA = (await hub.request('POST', '/api/v1/projects/register', {token: alice.token, body: {name: 'listing'}})).body.project.id
    expect((await hub.request('POST', `/api/v1/projects/${projectA}/members`, {token: alice.token, body: {userId: bob.id, role: 'member'}})).status).toBe(200)
  })
  afterAll(() => hub?.dispose())

  it('GET /api/v1/projects/:id/artifacts lists what the caller may read, with every version newest first', async () => {
    const first = await publish(`/api/v1/artifacts?name=a.txt&title=Notes&scope=${projectA}`, Buffer.from('one'))
    await publish(`/api/v1/artifacts/${first.artifact.id}/versions?name=a.txt`, Buffer.from('two'))
    const other = await publish(`/api/v1/artifacts?name=b.json&scope=${projectA}`, Buffer.from('{}'))

    const res = await get(bob.token, `/api/v1/projects/${projectA}/artifacts`)
    expect(res.status).toBe(200)
    const list = res.json.artifacts as Array<{artifact: {id: string; title: string; currentVersion: number}; versions: Array<{seq: number; manifest: Array<{path: string; sha256: string}>}>}>
    expect(list.map((a) => a.artifact.id).sort()).toEqual([first.artifact.id, other.artifact.id].sort())
    const notes = list.find((a) => a.artifact.id === first.artifact.id)!
    expect(notes.artifact).toMatchObject({title: 'Notes', currentVersion: 2})
    expect(notes.versions.map((v) => v.seq)).toEqual([2, 1])
    expect(notes.versions[1].manifest).toEqual([expect.objectContaining({path: 'a.txt', sha256: sha256('one')})])
    // By slug too.
    const slug = (await hub.request('GET', `/api/v1/projects/${projectA}`, {token: alice.token})).body.project.slug
    expect((await get(alice.token, `/api/v1/projects/${slug}/artifacts`)).json.artifacts).toHaveLength(2)
  })

  it('a non-member and an unknown project get the same 404', async () => {
    const outside = await get(carol.token, `/api/v1/projects/${projectA}/artifacts`)
    const unknown = await get(carol.token, '/api/v1/projects/no-such-project/artifacts')
    expect([outside.status, outside.json.error.code, outside.json.error.message]).toEqual([404, 'not_found', unknown.json.error.message])
    expect(unknown.status).toBe(404)
  })

  it('admin status carries server.hub.hub_name for any signed-in user', async () => {
    expect((await get(carol.token, '/api/v1/admin/status')).json.hubName).toBe('')
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {hub: {hub_name: 'Team Hub'}}}})).status).toBe(200)
    expect((await get(carol.token, '/api/v1/admin/status')).json.hubName).toBe('Team Hub')
  })

  it('an unknown page path is a styled HTML 404 for a browser; API paths and non-browsers keep the envelope', async () => {
    const page = await get(null, '/no/such/page?x=<b>', {accept: 'text/html,application/xhtml+xml'})
    expect(page.status).toBe(404)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    const text = page.body.toString()
    expect(text).toContain('Page not found')
    expect(text).toContain('<code>/no/such/page</code>')
    expect(text).toContain('href="/"')
    const api = await get(null, '/api/v1/nothing-here', {accept: 'text/html'})
    expect([api.status, api.json.error.code]).toEqual([404, 'not_found'])
    const script = await get(null, '/no/such/page')
    expect([script.status, script.json.error.details.reason]).toEqual([404, 'no_route'])
  })
})
