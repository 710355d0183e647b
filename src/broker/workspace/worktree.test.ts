import {existsSync, mkdirSync, readdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {commitFile, makeRepos, sh, type TestRepos} from '../../../test/helpers/git-repos.js'
import {createWorkspace, keptRepoPath, reattachWorkspace, removeWorkspace} from './worktree.js'

describe('agent workspaces: clones of gitRemote, removal that keeps unpushed work, re-attach', () => {
  let repos: TestRepos
  /** Laid out like a broker's state dir: workspaces/<agent-id>, kept-branches/. */
  let stateDir: string
  const wsPath = (id: string) => join(stateDir, 'workspaces', id)
  beforeEach(() => {
    repos = makeRepos()
    stateDir = join(repos.root, 'state')
    mkdirSync(stateDir)
  })
  afterEach(() => repos.dispose())

  const clone = (id: string, branch = `svc/${id}`) => createWorkspace({gitRemote: repos.remote, branch}, wsPath(id))

  it('a clone of the remote is on svc/<x>, made from the remote default branch', async () => {
    const main = sh(repos.remote, 'rev-parse', 'refs/heads/main')
    const ws = await clone('a1')
    expect(ws).toEqual({path: wsPath('a1'), branch: 'svc/a1', baseRef: 'main', baseCommit: main})
    expect(sh(ws!.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/a1')
    expect(sh(ws!.path, 'rev-parse', 'HEAD')).toBe(main)
    expect(sh(ws!.path, 'remote', 'get-url', 'origin')).toBe(repos.remote)
  })

  it('a remote that is no repository is clone_failed, and nothing is left behind', async () => {
    const bad = join(repos.root, 'no-such-remote.git')
    await expect(createWorkspace({gitRemote: bad, branch: 'svc/a2'}, wsPath('a2'))).rejects.toMatchObject({code: 'clone_failed', message: expect.stringContaining(bad)})
    expect(existsSync(wsPath('a2'))).toBe(false)
    expect(readdirSync(join(stateDir, 'workspaces'))).toEqual([])
  })

  it('removing a clone whose branch has unpushed commits keeps its repository, bare, in kept-branches', async () => {
    const ws = (await clone('a3'))!
    const mine = commitFile(ws.path, 'work.txt', 'the agent\'s work\n')
    const kept = await removeWorkspace(ws)
    expect(kept).toBe(join(stateDir, 'kept-branches', 'a3.git'))
    expect(keptRepoPath(ws.path)).toBe(kept)
    expect(existsSync(ws.path)).toBe(false)
    expect(sh(kept!, 'config', 'core.bare')).toBe('true')
    expect(sh(kept!, 'rev-parse', 'refs/heads/svc/a3')).toBe(mine)
    // The documented way back: fetch the branch from the kept repository.
    sh(repos.checkout, 'fetch', '-q', kept!, 'svc/a3:refs/heads/svc/a3')
    expect(sh(repos.checkout, 'show', 'svc/a3:work.txt')).toBe("the agent's work")
  })

  it('removing a clone with nothing unpushed keeps nothing (pushed commits count as kept)', async () => {
    const fresh = (await clone('a4'))!
    expect(await removeWorkspace(fresh)).toBeNull()
    const pushed = (await clone('a5'))!
    commitFile(pushed.path, 'done.txt', 'pushed\n')
    sh(pushed.path, 'push', '-q', 'origin', 'svc/a5')
    expect(await removeWorkspace(pushed)).toBeNull()
    expect(existsSync(fresh.path) || existsSync(pushed.path)).toBe(false)
    expect(existsSync(join(stateDir, 'kept-branches'))).toBe(false)
  })

  it('removeBranch (undoing a failed create) keeps nothing even with commits; a second kept repo of one ID does not overwrite the first', async () => {
    const undone = (await clone('a6'))!
    commitFile(undone.path, 'x.txt', 'x\n')
    expect(await removeWorkspace(undone, {removeBranch: true})).toBeNull()
    expect(existsSync(undone.path)).toBe(false)
    expect(existsSync(keptRepoPath(undone.path))).toBe(false)
    const first = (await clone('a7'))!
    const one = commitFile(first.path, 'one.txt', '1\n')
    await removeWorkspace(first)
    const second = (await clone('a7'))!
    const two = commitFile(second.path, 'two.txt', '2\n')
    const kept = await removeWorkspace(second)
    expect(kept).toBe(join(stateDir, 'kept-branches', 'a7-2.git'))
    expect(sh(keptRepoPath(first.path), 'rev-parse', 'svc/a7')).toBe(one)
    expect(sh(kept!, 'rev-parse', 'svc/a7')).toBe(two)
  })

  it('removing a worktree keeps its branch in the checkout, and nothing goes to kept-branches', async () => {
    const ws = (await createWorkspace({checkout: repos.checkout, branch: 'svc/w1'}, wsPath('w1')))!
    const mine = commitFile(ws.path, 'w.txt', 'w\n')
    expect(await removeWorkspace(ws)).toBeNull()
    expect(existsSync(ws.path)).toBe(false)
    expect(sh(repos.checkout, 'rev-parse', 'refs/heads/svc/w1')).toBe(mine)
    expect(existsSync(join(stateDir, 'kept-branches'))).toBe(false)
  })

  it('a vanished worktree is put back on its own branch with its commits, base kept, no branch made', async () => {
    const ws = (await createWorkspace({checkout: repos.checkout, branch: 'svc/w2'}, wsPath('w2')))!
    const mine = commitFile(ws.path, 'w.txt', 'work\n')
    commitFile(repos.checkout, 'later.txt', 'the checkout moved on\n')
    const branchesBefore = sh(repos.checkout, 'branch', '--format=%(refname:short)')
    rmSync(ws.path, {recursive: true, force: true})
    const back = await reattachWorkspace({checkout: repos.checkout, gitRemote: repos.remote, branch: 'svc/w2'}, ws, wsPath('w2'))
    expect(back).toEqual(ws)
    expect(sh(back.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/w2')
    expect(sh(back.path, 'rev-parse', 'HEAD')).toBe(mine)
    expect(sh(repos.checkout, 'branch', '--format=%(refname:short)')).toBe(branchesBefore)
    const listed = sh(repos.checkout, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))
    expect(listed).toEqual([`worktree ${repos.checkout}`, `worktree ${ws.path}`])
  })

  it('a vanished worktree whose branch was deleted too is workspace_missing, and nothing is made', async () => {
    const ws = (await createWorkspace({checkout: repos.checkout, branch: 'svc/w3'}, wsPath('w3')))!
    rmSync(ws.path, {recursive: true, force: true})
    sh(repos.checkout, 'worktree', 'prune')
    sh(repos.checkout, 'branch', '-D', 'svc/w3')
    await expect(reattachWorkspace({checkout: repos.checkout, branch: 'svc/w3'}, ws, wsPath('w3'))).rejects.toMatchObject({code: 'workspace_missing', details: {branch: 'svc/w3'}})
    expect(existsSync(ws.path)).toBe(false)
  })

  it('a vanished clone comes back from the remote on its pushed branch; an unpushed one is workspace_missing with nothing made', async () => {
    const ws = (await clone('c1'))!
    const pushed = commitFile(ws.path, 'p.txt', 'pushed\n')
    sh(ws.path, 'push', '-q', 'origin', 'svc/c1')
    rmSync(ws.path, {recursive: true, force: true})
    const back = await reattachWorkspace({gitRemote: repos.remote, branch: 'svc/c1'}, ws, wsPath('c1'))
    expect(back).toEqual(ws)
    expect(sh(back.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/c1')
    expect(sh(back.path, 'rev-parse', 'HEAD')).toBe(pushed)

    const lost = (await clone('c2'))!
    commitFile(lost.path, 'l.txt', 'never pushed\n')
    rmSync(lost.path, {recursive: true, force: true})
    await expect(reattachWorkspace({gitRemote: repos.remote, branch: 'svc/c2'}, lost, wsPath('c2'))).rejects.toMatchObject({code: 'workspace_missing', message: expect.stringContaining('has no branch svc/c2')})
    expect(existsSync(lost.path)).toBe(false)
  })

  it('never puts a workspace back over something at its path', async () => {
    const ws = (await clone('c3'))!
    await expect(reattachWorkspace({gitRemote: repos.remote, branch: 'svc/c3'}, {...ws, path: join(repos.root, 'gone')}, ws.path)).rejects.toMatchObject({code: 'workspace_failed'})
    expect(sh(ws.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/c3')
  })
})
