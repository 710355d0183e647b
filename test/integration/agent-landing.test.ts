import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

/**
 * Landing work through the Hub, the tunnel and the co-located broker (issue 30, item 7): the
 * merge is the person's as their checkout's git names them (not the Hub's `Developer
 * <dev@localhost>`), the agent's uncommitted work carries its task as message, and a delete
 * with `branch=true` removes the agent's branch once merged, keeping (and saying so) otherwise.
 */
describeEachDialect('agents: who lands the work, and deleting the branch with the agent', (dialect) => {
  let hub: LiveHub
  let repos: TestRepos
  let projectId: string
  const agents: Record<string, {id: string; path: string}> = {}

  async function agentWithRepo(name: string, task: string) {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', harnessConfig: 'shell', task}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    projectId = r.body.agent.projectId
    const ws = await repos.addAgent(name, {stateDir: hub.colocated!.broker.opts.stateDir, agentId: r.body.agent.id})
    const {paths: _, ...workspace} = ws
    await hub.store.agents.update(r.body.agent.id, {workspace}, iso(new Date()))
    // The agent's own repository names someone else: never read for the person.
    sh(ws.path, 'config', 'user.name', 'Mallory')
    sh(ws.path, 'config', 'user.email', 'mallory@evil.example')
    return (agents[name] = {id: r.body.agent.id, path: ws.path})
  }

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    repos = makeRepos()
    sh(repos.checkout, 'config', 'user.name', 'Pat Person')
    sh(repos.checkout, 'config', 'user.email', 'pat@example.com')
    await agentWithRepo('alice', 'Add a parser for the config files\nwith tests')
    await agentWithRepo('bob', 'Rename the helpers')
    await hub.store.projects.update(projectId, {localPath: repos.checkout}, iso(new Date()))
  })
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
  })

  it("a merge by the dev user is authored by the checkout's user.name/user.email; the uncommitted work is the agent's, with its task as message", async () => {
    write(agents.alice.path, 'src/parser.ts', 'export const parse = (s: string) => s\n')
    const r = await hub.request('POST', `/api/v1/agents/${agents.alice.id}/merge`, {body: {}})
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.strategy).toBe('merge')
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', 'main')).toBe('Pat Person <pat@example.com>|Pat Person <pat@example.com>')
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s', 'svc/alice')).toBe(`alice <${agents.alice.id}@svc>|Pat Person <pat@example.com>|Add a parser for the config files`)
    expect(sh(repos.checkout, 'log', '--format=%an %ae %cn %ce', 'main')).not.toMatch(/Developer|dev@localhost|Mallory/)
  })

  it('delete with branch=true: a merged branch goes, and the answer says so', async () => {
    const r = await hub.request('DELETE', `/api/v1/agents/${agents.alice.id}?branch=true`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.branch).toEqual({name: 'svc/alice', deleted: true})
    expect(r.body.agent.name).toBe('alice')
    expect(sh(repos.checkout, 'branch', '--list', 'svc/alice')).toBe('')
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')
  })

  it('delete with branch=true of work not merged: the agent goes, the branch is kept in the checkout, and the answer says why', async () => {
    write(agents.bob.path, 'src/helpers.ts', 'export const renamed = 1\n')
    sh(agents.bob.path, 'add', '-A')
    sh(agents.bob.path, 'commit', '-qm', 'bob: rename')
    const tip = sh(agents.bob.path, 'rev-parse', 'HEAD')
    const r = await hub.request('DELETE', `/api/v1/agents/${agents.bob.id}?branch=true`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.branch).toMatchObject({name: 'svc/bob', deleted: false})
    expect(r.body.branch.reason).toMatch(/not merged into main/)
    expect(sh(repos.checkout, 'rev-parse', 'svc/bob')).toBe(tip)
    expect((await hub.request('GET', `/api/v1/agents/${agents.bob.id}`)).status).toBe(404)
  })

  it('bad input changes nothing: branch=maybe is a validation error and the agent stays', async () => {
    const carol = await hub.request('POST', '/api/v1/agents', {body: {name: 'carol', projectId, harnessConfig: 'shell'}})
    const r = await hub.request('DELETE', `/api/v1/agents/${carol.body.agent.id}?branch=maybe`)
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('validation_error')
    expect((await hub.request('GET', `/api/v1/agents/${carol.body.agent.id}`)).status).toBe(200)
  })
})
