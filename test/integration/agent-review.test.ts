import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {makeRepos, sh, write, BINARY, type TestRepos} from '../helpers/git-repos.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Diff, merge and push of agents' work through the Hub's routes, the tunnel and the co-located
 * broker, against real repositories: a checkout with a bare `origin` and one real worktree per
 * agent (set on the agent row as dispatch records it).
 */
describeEachDialect('agents: review and land work (diff, merge, push)', (dialect) => {
  let hub: LiveHub
  let repos: TestRepos
  let projectId: string
  let member: TestUser
  let stranger: TestUser
  const agents: Record<string, {id: string; path: string}> = {}

  async function agentWithWorktree(name: string, opts: {worktree?: boolean} = {}) {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    projectId = r.body.agent.projectId
    if (opts.worktree === false) return (agents[name] = {id: r.body.agent.id, path: ''})
    const ws = await repos.addAgent(name, {stateDir: hub.colocated!.broker.opts.stateDir, agentId: r.body.agent.id})
    const {paths: _, ...workspace} = ws
    await hub.store.agents.update(r.body.agent.id, {workspace}, iso(new Date()))
    return (agents[name] = {id: r.body.agent.id, path: ws.path})
  }

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    repos = makeRepos()
    await agentWithWorktree('alice')
    await agentWithWorktree('bob')
    await hub.store.projects.update(projectId, {localPath: repos.checkout}, iso(new Date()))
    member = await createUser(hub)
    stranger = await createUser(hub)
    await hub.store.projects.setMember(projectId, member.user.id, 'member', iso(new Date()))
  })
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
  })

  it('an untouched worktree: empty diff, in the top-level and project-scoped forms', async () => {
    const base = sh(repos.checkout, 'rev-parse', 'main')
    for (const url of [`/api/v1/agents/${agents.alice.id}/diff`, `/api/v1/projects/${projectId}/agents/alice/diff`]) {
      const r = await hub.request('GET', url)
      expect(r.status, url).toBe(200)
      expect(r.body).toEqual({base: {ref: 'main', commit: base}, head: {branch: 'svc/alice', commit: base}, files: [], patch: '', truncated: false})
    }
  })

  it('two changed files (one committed) and an added one, plus a binary: all listed; stat and maxBytes', async () => {
    const wt = agents.alice.path
    write(wt, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 30\n')
    sh(wt, 'commit', '-qam', 'alice: c is 30')
    write(wt, 'README.md', '# demo\nby alice\n')
    write(wt, 'src/added.ts', `${'export const added = 1\n'.repeat(200)}`)
    write(wt, 'logo.png', Buffer.concat([BINARY, BINARY]))
    const r = await hub.request('GET', `/api/v1/agents/${agents.alice.id}/diff`)
    expect(r.status).toBe(200)
    expect(r.body.head.commit).toBe(sh(wt, 'rev-parse', 'HEAD'))
    expect(r.body.files).toEqual([
      {path: 'README.md', status: 'modified', additions: 1, deletions: 0},
      {path: 'logo.png', status: 'modified', additions: 0, deletions: 0, binary: true},
      {path: 'src/added.ts', status: 'added', additions: 200, deletions: 0},
      {path: 'src/app.ts', status: 'modified', additions: 1, deletions: 1},
    ])
    expect(r.body.patch).toContain('+export const c = 30')
    expect(r.body.patch).toContain('Binary files a/logo.png and b/logo.png differ')
    const stat = await hub.request('GET', `/api/v1/agents/${agents.alice.id}/diff?stat=true`)
    expect(stat.body).toMatchObject({files: r.body.files, patch: '', truncated: false})
    const cut = await hub.request('GET', `/api/v1/agents/${agents.alice.id}/diff?maxBytes=1024`)
    expect(cut.body.truncated).toBe(true)
    expect(Buffer.byteLength(cut.body.patch)).toBeLessThanOrEqual(1024)
    expect(cut.body.files).toHaveLength(4)
    expect((await hub.request('GET', `/api/v1/agents/${agents.alice.id}/diff?maxBytes=10`)).body.error.code).toBe('validation_error')
  })

  it('who may: reading suffices for the diff; merge and push need a person owning the agent or holding agent.lifecycle; an agent never lands its own work', async () => {
    const diff = `/api/v1/agents/${agents.alice.id}/diff`
    const merge = `/api/v1/agents/${agents.alice.id}/merge`
    expect((await hub.request('GET', diff, {token: stranger.token})).status).toBe(404)
    expect((await hub.request('POST', merge, {token: stranger.token, body: {}})).status).toBe(404)
    const pat = await hub.request('POST', '/api/v1/auth/tokens', {token: member.token, body: {name: 'read-only', projectId, permissions: ['project.read', 'agent.read']}})
    expect(pat.status).toBe(201)
    expect((await hub.request('GET', diff, {token: pat.body.token})).status).toBe(200)
    const denied = await hub.request('POST', merge, {token: pat.body.token, body: {}})
    expect(denied.status).toBe(403)
    expect(denied.body.error.code).toBe('forbidden')
    const record = (await hub.store.agents.get(agents.alice.id))!
    const {token: agentToken} = await hub.services.agentTokens.mint(record)
    expect((await hub.request('GET', diff, {token: agentToken})).status).toBe(200)
    for (const action of ['merge', 'push']) {
      const r = await hub.request('POST', `/api/v1/agents/${agents.alice.id}/${action}`, {token: agentToken, body: {}})
      expect(r.status, action).toBe(403)
      // An agent merges only its own children (Teams); its own work it never lands.
      expect(r.body.error.message).toMatch(action === 'merge' ? /only its own children/ : /agents never/)
    }
    expect((await hub.request('POST', merge, {body: {strategy: 'rebase'}})).body.error.code).toBe('validation_error')
    // Nothing moved.
    expect(sh(repos.checkout, 'rev-parse', 'main')).toBe(sh(repos.checkout, 'rev-parse', 'origin/main'))
  })

  it('refusals over HTTP change nothing: checkout_dirty names only the touched files; base_not_checked_out says which', async () => {
    write(repos.checkout, 'README.md', 'a local edit\n')
    let before = repos.fingerprint()
    const dirty = await hub.request('POST', `/api/v1/agents/${agents.alice.id}/merge`, {body: {strategy: 'squash'}})
    expect(dirty.status).toBe(409)
    expect(dirty.body.error).toMatchObject({code: 'checkout_dirty', details: {files: ['README.md']}})
    expect(repos.fingerprint()).toBe(before)
    sh(repos.checkout, 'checkout', '-q', '--', 'README.md')
    sh(repos.checkout, 'checkout', '-qb', 'feature')
    before = repos.fingerprint()
    const elsewhere = await hub.request('POST', `/api/v1/agents/${agents.alice.id}/merge`, {body: {}})
    expect(elsewhere.status).toBe(409)
    expect(elsewhere.body.error).toMatchObject({code: 'base_not_checked_out', details: {baseRef: 'main', checkedOut: 'feature'}})
    expect(repos.fingerprint()).toBe(before)
    sh(repos.checkout, 'checkout', '-q', 'main')
  })

  it('squash merge lands the work in one commit (agent author, user committer) and is audited; a conflicting second agent is refused with the file, the checkout byte-for-byte unchanged', async () => {
    write(agents.bob.path, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 300\n')
    const r = await hub.request('POST', `/api/v1/projects/${projectId}/agents/alice/merge`, {token: member.token, body: {strategy: 'squash', message: 'Land alice'}})
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({merged: true, commit: sh(repos.checkout, 'rev-parse', 'main'), strategy: 'squash', baseRef: 'main', branch: 'svc/alice'})
    // The committer is the person as the checkout's git names them (git-repos.ts sets Dev), not their Hub identity.
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s')).toBe(`alice <${agents.alice.id}@svc>|Dev <dev@example.com>|Land alice`)
    expect(sh(repos.checkout, 'show', 'HEAD:src/added.ts')).toContain('export const added = 1')
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')
    const audit = await hub.store.audit.list('agent_merge')
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({actor: {kind: 'user', id: member.user.id}, projectId, target: agents.alice.id, details: {strategy: 'squash', commit: r.body.commit, baseRef: 'main', branch: 'svc/alice', files: 4}})

    const before = repos.fingerprint()
    const conflict = await hub.request('POST', `/api/v1/agents/${agents.bob.id}/merge`, {body: {}})
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toMatchObject({code: 'merge_conflict', details: {files: ['src/app.ts']}})
    expect(repos.fingerprint()).toBe(before)
    expect(await hub.store.audit.list('agent_merge')).toHaveLength(1)
    const again = await hub.request('POST', `/api/v1/agents/${agents.alice.id}/merge`, {body: {}})
    expect(again.body.error.code).toBe('nothing_to_merge')
  })

  it('push: the branch reaches the remote, answering its URL; audited', async () => {
    const r = await hub.request('POST', `/api/v1/agents/${agents.alice.id}/push`, {body: {}})
    expect(r.status).toBe(200)
    expect(r.body).toEqual({pushed: true, remote: 'origin', remoteUrl: repos.remote, branch: 'svc/alice', commit: sh(repos.checkout, 'rev-parse', 'svc/alice'), url: repos.remote})
    expect(sh(repos.remote, 'rev-parse', 'svc/alice')).toBe(r.body.commit)
    expect(await hub.store.audit.list('agent_push')).toHaveLength(1)
  })

  it('end to end through agent create: dispatch makes the worktree, the work shows in the diff and merges', async () => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'dave', projectId, harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    const ws = r.body.agent.workspace
    expect(ws).toMatchObject({branch: 'svc/dave', baseRef: 'main', baseCommit: sh(repos.checkout, 'rev-parse', 'main')})
    write(ws.path, 'docs/dave.md', 'written by dave\n')
    const diff = await hub.request('GET', `/api/v1/agents/${r.body.agent.id}/diff`)
    expect(diff.body.files).toEqual([{path: 'docs/dave.md', status: 'added', additions: 1, deletions: 0}])
    const merged = await hub.request('POST', `/api/v1/agents/${r.body.agent.id}/merge`, {body: {strategy: 'squash'}})
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    expect(sh(repos.checkout, 'show', 'HEAD:docs/dave.md')).toBe('written by dave')
  })

  it('an agent without a workspace: 409 no_workspace', async () => {
    const carol = await agentWithWorktree('carol', {worktree: false})
    await hub.store.agents.update(carol.id, {workspace: null}, iso(new Date()))
    for (const [method, path] of [['GET', 'diff'], ['POST', 'merge'], ['POST', 'push']] as const) {
      const r = await hub.request(method, `/api/v1/agents/${carol.id}/${path}`, method === 'POST' ? {body: {}} : {})
      expect(r.status, path).toBe(409)
      expect(r.body.error.code).toBe('no_workspace')
    }
  })
})
