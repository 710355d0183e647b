import {existsSync, readFileSync, rmSync, statSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {commitFile, makeRepos, sh, type TestRepos} from '../helpers/git-repos.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

describeEachDialect("agents: a clone of the project's remote, and workspaces that must not lose work", (dialect) => {
  let hub: LiveHub
  let repos: TestRepos
  /** Registered with only `gitRemote` (a local bare repository): its agents work in clones. */
  let remoteProject: string
  /** Registered with the checkout: its agents work in worktrees. */
  let checkoutProject: string

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    repos = makeRepos()
    const r = await hub.request('POST', '/api/v1/projects/register', {body: {name: 'remote-only', gitRemote: repos.remote}})
    expect(r.status).toBe(201)
    expect(r.body.project.localPath).toBeNull()
    remoteProject = r.body.project.id
    // gitRemote is the normalised key that finds the project; the broker clones cloneUrl, the
    // remote as registered.
    expect(r.body.project).toMatchObject({gitRemote: `file${repos.remote.replace(/\.git$/, '')}`, cloneUrl: repos.remote})
    const c = await hub.request('POST', '/api/v1/projects/register', {body: {name: 'with-checkout', localPath: repos.checkout}})
    expect(c.status).toBe(201)
    checkoutProject = c.body.project.id
  })
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
  })

  const create = async (projectId: string, name: string) => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig: 'shell'}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.agent as {id: string; workspace: {path: string; branch: string; baseRef: string; baseCommit: string}}
  }
  const agent = async (id: string) => (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent

  it('deleting an agent whose clone has unpushed commits keeps its branch in <stateDir>/kept-branches/<agent-id>.git', async () => {
    const a = await create(remoteProject, 'alpha')
    expect(a.workspace).toMatchObject({branch: 'svc/alpha', baseRef: 'main', baseCommit: sh(repos.remote, 'rev-parse', 'main')})
    // Its own repository (the work tree's .git names it), not a worktree of any checkout.
    expect(statSync(join(a.workspace.path, '.git')).isFile()).toBe(true)
    const mine = commitFile(a.workspace.path, 'alpha.txt', 'work only this clone has\n')
    expect((await hub.request('DELETE', `/api/v1/agents/${a.id}`)).status).toBe(200)
    expect(existsSync(a.workspace.path)).toBe(false)
    const kept = join(dirname(dirname(a.workspace.path)), 'kept-branches', `${a.id}.git`)
    expect(basename(dirname(a.workspace.path))).toBe('workspaces')
    expect(sh(kept, 'rev-parse', 'refs/heads/svc/alpha')).toBe(mine)
    sh(repos.checkout, 'fetch', '-q', kept, 'svc/alpha:refs/heads/recovered-alpha')
    expect(sh(repos.checkout, 'show', 'recovered-alpha:alpha.txt')).toBe('work only this clone has')
  })

  it('a stopped agent whose clone vanished starts again on its pushed branch', async () => {
    const b = await create(remoteProject, 'beta')
    const mine = commitFile(b.workspace.path, 'beta.txt', 'pushed work\n')
    const pushed = await hub.request('POST', `/api/v1/agents/${b.id}/push`, {body: {}})
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(200)
    expect((await hub.request('POST', `/api/v1/agents/${b.id}/stop`, {body: {}})).status).toBe(200)
    rmSync(b.workspace.path, {recursive: true, force: true})
    const started = await hub.request('POST', `/api/v1/agents/${b.id}/start`, {body: {}})
    expect(started.status, JSON.stringify(started.body)).toBe(200)
    expect(started.body.agent).toMatchObject({phase: 'running', workspace: b.workspace})
    expect(sh(b.workspace.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/beta')
    expect(sh(b.workspace.path, 'rev-parse', 'HEAD')).toBe(mine)
    // Everything is on the remote: deleting it keeps nothing.
    expect((await hub.request('DELETE', `/api/v1/agents/${b.id}`)).status).toBe(200)
    expect(existsSync(b.workspace.path)).toBe(false)
    expect(existsSync(join(dirname(dirname(b.workspace.path)), 'kept-branches', `${b.id}.git`))).toBe(false)
  })

  it('a stopped agent whose work tree vanished gets it back from its repository, unpushed commits included', async () => {
    const d = await create(remoteProject, 'delta2')
    const mine = commitFile(d.workspace.path, 'delta.txt', 'never pushed\n')
    expect((await hub.request('POST', `/api/v1/agents/${d.id}/stop`, {body: {}})).status).toBe(200)
    rmSync(d.workspace.path, {recursive: true, force: true})
    const started = await hub.request('POST', `/api/v1/agents/${d.id}/start`, {body: {}})
    expect(started.status, JSON.stringify(started.body)).toBe(200)
    expect(sh(d.workspace.path, 'rev-parse', 'HEAD')).toBe(mine)
    expect(readFileSync(join(d.workspace.path, 'delta.txt'), 'utf8')).toBe('never pushed\n')
  })

  it('a stopped agent whose unpushed clone and repository vanished does not start on a fresh branch: it says the work is gone', async () => {
    const d = await create(remoteProject, 'delta')
    commitFile(d.workspace.path, 'delta.txt', 'never pushed\n')
    expect((await hub.request('POST', `/api/v1/agents/${d.id}/stop`, {body: {}})).status).toBe(200)
    rmSync(d.workspace.path, {recursive: true, force: true})
    rmSync(join(dirname(dirname(d.workspace.path)), 'repos', `${d.id}.git`), {recursive: true, force: true})
    const r = await hub.request('POST', `/api/v1/agents/${d.id}/start`, {body: {}})
    expect(r.status).toBe(409)
    expect(r.body.error).toMatchObject({code: 'workspace_missing', details: {branch: 'svc/delta'}})
    const after = await agent(d.id)
    expect(after.phase).toBe('error')
    expect(after.error).toContain('has no branch svc/delta')
    expect(existsSync(d.workspace.path)).toBe(false)
  })

  it('a stopped agent whose worktree vanished starts again in a worktree of its own branch, commits and base kept', async () => {
    const g = await create(checkoutProject, 'gamma')
    const mine = commitFile(g.workspace.path, 'gamma.txt', 'work on the branch\n')
    const branches = sh(repos.checkout, 'branch', '--format=%(refname:short)')
    expect((await hub.request('POST', `/api/v1/agents/${g.id}/stop`, {body: {}})).status).toBe(200)
    rmSync(g.workspace.path, {recursive: true, force: true})
    const started = await hub.request('POST', `/api/v1/agents/${g.id}/start`, {body: {}})
    expect(started.status, JSON.stringify(started.body)).toBe(200)
    expect(started.body.agent).toMatchObject({phase: 'running', workspace: g.workspace})
    expect(sh(g.workspace.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/gamma')
    expect(sh(g.workspace.path, 'rev-parse', 'HEAD')).toBe(mine)
    expect(sh(repos.checkout, 'branch', '--format=%(refname:short)')).toBe(branches)
  })
})
