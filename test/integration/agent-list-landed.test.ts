import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

/**
 * Issue 30 item 5, the Hub's part of `svc agent list`: an agent is named by a unique prefix of 8
 * or more characters of its ID wherever its ID names it (a shared prefix is `ambiguous_agent`),
 * and the list and the agent carry `mergedAt` / `pushedAt` once a merge or push succeeded.
 */
describeEachDialect('agents: ID prefixes and landed work', (dialect) => {
  let hub: LiveHub
  let repos: TestRepos
  let projectId: string
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    repos = makeRepos()
    for (const name of ['alice', 'bob']) {
      const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', harnessConfig: 'shell'}})
      expect(r.status).toBe(201)
      projectId = r.body.agent.projectId
      ids[name] = r.body.agent.id
      const {paths: _, ...workspace} = await repos.addAgent(name, {stateDir: hub.colocated!.broker.opts.stateDir, agentId: r.body.agent.id})
      await hub.store.agents.update(r.body.agent.id, {workspace}, iso(new Date()))
    }
    await hub.store.projects.update(projectId, {localPath: repos.checkout}, iso(new Date()))
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
  })

  it('a unique prefix of 8+ characters names the agent in the top-level and project-scoped routes and their actions', async () => {
    const prefix = ids.alice.slice(0, 8)
    for (const url of [`/api/v1/agents/${prefix}`, `/api/v1/projects/${projectId}/agents/${prefix}`, `/api/v1/projects/default/agents/${ids.alice.slice(0, 13).toUpperCase()}`]) {
      const r = await hub.request('GET', url)
      expect(r.status, url).toBe(200)
      expect(r.body.agent.id).toBe(ids.alice)
    }
    expect((await hub.request('GET', `/api/v1/agents/${prefix}/diff`)).status).toBe(200)
    expect((await hub.request('POST', `/api/v1/projects/default/agents/${prefix}/keys`, {body: {keys: 'x'}})).status).toBe(200)
    // Seven characters are not a prefix; neither is the start of nobody's ID.
    expect((await hub.request('GET', `/api/v1/agents/${ids.alice.slice(0, 7)}`)).status).toBe(404)
    const nobody = ids.alice.startsWith('f') ? '00000000' : 'ffffffff'
    expect((await hub.request('GET', `/api/v1/agents/${nobody}`)).status).toBe(404)
  })

  it('a prefix two agents share is refused with ambiguous_agent; a name that looks like a prefix is the name', async () => {
    const t = iso(new Date())
    const base = {projectId, brokerId: null, phase: 'stopped', activity: null, detail: '', harnessConfig: 'shell', template: null, task: null, role: 'full', runtime: null, runtimeRef: null, config: {}, error: null, createdBy: {kind: 'user' as const, id: 'u'}, createdAt: t, updatedAt: t}
    await hub.store.agents.insert({...base, id: 'abcdef12-0000-4000-8000-000000000001', name: 'twin-1'})
    await hub.store.agents.insert({...base, id: 'abcdef12-0000-4000-8000-000000000002', name: 'twin-2'})
    const r = await hub.request('GET', '/api/v1/agents/abcdef12')
    expect(r.status).toBe(409)
    expect(r.body.error).toMatchObject({code: 'ambiguous_agent', details: {prefix: 'abcdef12'}})
    expect((await hub.request('GET', '/api/v1/agents/abcdef12-0000-4000-8000-0000000000')).status).toBe(409)
    expect((await hub.request('GET', '/api/v1/agents/abcdef12-0000-4000-8000-00000000000')).status).toBe(409)
    // A whole ID is exact; one more character tells the twins apart.
    expect((await hub.request('GET', '/api/v1/agents/abcdef12-0000-4000-8000-000000000002')).body.agent.name).toBe('twin-2')
    await hub.store.agents.insert({...base, id: 'fedcba98-0000-4000-8000-000000000003', name: 'abcdef12'})
    expect((await hub.request('GET', `/api/v1/projects/${projectId}/agents/abcdef12`)).body.agent.name).toBe('abcdef12')
  })

  it('mergedAt and pushedAt: null until the agent\'s work lands, then the time of the latest, in the list and on the agent', async () => {
    const list = async () => Object.fromEntries((await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents.map((a: {name: string}) => [a.name, a]))
    const before = await list()
    expect(before.alice).toMatchObject({mergedAt: null, pushedAt: null})
    const wt = (await hub.request('GET', `/api/v1/agents/${ids.alice}`)).body.agent.workspace.path
    write(wt, 'src/app.ts', 'export const landed = true\n')
    sh(wt, 'commit', '-qam', 'alice: land')
    const merged = await hub.request('POST', `/api/v1/agents/${ids.alice}/merge`, {body: {}})
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    const pushed = await hub.request('POST', `/api/v1/agents/${ids.alice}/push`, {body: {}})
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(200)
    const after = await list()
    expect(after.alice.mergedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(after.alice.pushedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(after.bob).toMatchObject({mergedAt: null, pushedAt: null})
    expect((await hub.request('GET', `/api/v1/agents/${ids.alice}`)).body.agent.mergedAt).toBe(after.alice.mergedAt)
    // A refused merge (a conflict) lands nothing.
    write((await hub.request('GET', `/api/v1/agents/${ids.bob}`)).body.agent.workspace.path, 'src/app.ts', 'export const conflict = 1\n')
    expect((await hub.request('POST', `/api/v1/agents/${ids.bob}/merge`, {body: {}})).status).toBe(409)
    expect((await list()).bob.mergedAt).toBeNull()
  })
})
