import {afterAll, beforeAll, expect, it} from 'vitest'
import {listen, makeAgent, rawRequest, sha256} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/** Agent rules end to end over HTTP, with real agent tokens minted from the agent's role. */
describeEachDialect('artifacts with agent tokens', (dialect) => {
  let hub: TestHub
  let base: string
  let home: string
  let other: string

  const publish = (token: string, body: string, q = '') =>
    rawRequest('POST', `${base}/api/v1/artifacts?name=agent.txt${q}`, {token, body: Buffer.from(body), headers: {'x-content-sha256': sha256(body)}})
  const get = (token: string, path: string) => rawRequest('GET', `${base}${path}`, {token})

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    base = await listen(hub)
    home = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'agent-home'}})).body.project.id
    other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'agent-other'}})).body.project.id
  })
  afterAll(() => hub?.dispose())

  it('a baseline agent publishes into its own project without naming it, and owns the artifact', async () => {
    const agent = await makeAgent(hub.store, home, 'baseline')
    const res = await publish(agent.token, 'made by an agent\n')
    expect(res.status, res.body.toString()).toBe(201)
    expect(res.json.artifact).toMatchObject({owner: {kind: 'agent', id: agent.id}, projectId: home})
    const id = res.json.artifact.id
    // Its project's users read it; the owning agent publishes a new version but may not delete or share.
    expect((await get(hub.devToken, `/api/v1/artifacts/${id}/files/agent.txt`)).body.toString()).toBe('made by an agent\n')
    const v2 = await rawRequest('POST', `${base}/api/v1/artifacts/${id}/versions?name=agent.txt`, {token: agent.token, body: Buffer.from('v2')})
    expect(v2.status).toBe(201)
    expect((await rawRequest('DELETE', `${base}/api/v1/artifacts/${id}`, {token: agent.token})).status).toBe(403)
    expect((await rawRequest('POST', `${base}/api/v1/artifacts/${id}/grants`, {token: agent.token, body: Buffer.from(JSON.stringify({projectId: other})), headers: {'content-type': 'application/json'}})).status).toBe(403)
    // Naming another project is refused.
    expect((await publish(agent.token, 'x', `&scope=${other}`)).status).toBe(403)
  })

  it('readonly agents read but may not publish (403); agents without artifact scopes get 401 on publish and 404 on reads', async () => {
    const a = await publish((await makeAgent(hub.store, home, 'full')).token, 'shared within the project')
    const id = a.json.artifact.id
    const reader = await makeAgent(hub.store, home, 'readonly')
    expect((await get(reader.token, `/api/v1/artifacts/${id}`)).status).toBe(200)
    const refused = await publish(reader.token, 'x')
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe('forbidden')

    const none = await makeAgent(hub.store, home, 'none')
    const unauth = await publish(none.token, 'x')
    expect(unauth.status).toBe(401)
    expect(unauth.json.error.code).toBe('unauthorized')
    expect((await get(none.token, `/api/v1/artifacts/${id}`)).status).toBe(404)
    expect((await get(none.token, `/api/v1/artifacts/${id}/files/agent.txt`)).status).toBe(404)
  })

  it('agents of another project get 404, unless it was shared with their project (and they hold the read scope)', async () => {
    const a = await publish((await makeAgent(hub.store, home, 'baseline')).token, 'cross-project')
    const id = a.json.artifact.id
    const outsider = await makeAgent(hub.store, other, 'full')
    expect((await get(outsider.token, `/api/v1/artifacts/${id}`)).status).toBe(404)
    expect((await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: hub.devToken, body: {projectId: other}})).status).toBe(403) // the dev user is not the owner
    // The owner is an agent and agents cannot share; record the grant the owner's user would
    // have made, to check how an agent of that project reads it.
    await hub.store.artifacts.grant(id, {granteeKind: 'project', granteeId: other, grantedBy: 'test', createdAt: new Date().toISOString()})
    expect((await get(outsider.token, `/api/v1/artifacts/${id}/files/agent.txt`)).body.toString()).toBe('cross-project')
    const scopeless = await makeAgent(hub.store, other, 'none')
    expect((await get(scopeless.token, `/api/v1/artifacts/${id}`)).status).toBe(404)
  })
})
