import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {commitFile, makeRepos, sh, type TestRepos} from '../../../test/helpers/git-repos.js'
import {agentRepoPaths, readRecord} from './agent-repo.js'
import {hostGit, prepareHostRead} from './host-git.js'
import {mergeWorkspace} from './merge.js'
import {createWorkspace, keptRepoPath, removeWorkspace} from './repository.js'

describe("an agent's own repository: made, removed, its branch kept", () => {
  let repos: TestRepos
  beforeEach(() => (repos = makeRepos()))
  afterEach(() => repos.dispose())

  it('removing it fetches its branch into the checkout, or beside it when that name moved meanwhile', async () => {
    const ws = await repos.addAgent('keep')
    const tip = commitFile(ws.path, 'keep.txt', 'work\n')
    // Someone made svc/keep in the checkout meanwhile, on other history: it is not overwritten.
    sh(repos.checkout, 'checkout', '-q', '-b', 'svc/keep')
    const theirs = commitFile(repos.checkout, 'theirs.txt', 'a person\'s work\n')
    sh(repos.checkout, 'checkout', '-q', 'main')
    expect(await removeWorkspace(ws.paths, ws)).toBeNull()
    expect(sh(repos.checkout, 'rev-parse', 'svc/keep')).toBe(theirs)
    expect(sh(repos.checkout, 'rev-parse', 'svc/keep-keep')).toBe(tip)
    for (const p of [ws.paths.workdir, ws.paths.gitDir, ws.paths.hostDir, ws.paths.record]) expect(existsSync(p), p).toBe(false)
  })

  it('an agent merged with uncommitted work, then removed, leaves its landed branch as it is (no second branch)', async () => {
    const ws = await repos.addAgent('landed')
    commitFile(ws.path, 'a.txt', 'committed\n')
    writeFileSync(join(ws.path, 'b.txt'), 'left uncommitted\n')
    const who = {agent: {id: 'landed', name: 'landed'}, author: {name: 'landed', email: 'l@svc'}, committer: {name: 'Dana', email: 'd@example.com'}}
    await mergeWorkspace({paths: ws.paths, workspace: ws, strategy: 'merge', ...who})
    const landed = sh(repos.checkout, 'rev-parse', 'svc/landed')
    await removeWorkspace(ws.paths, ws)
    expect(sh(repos.checkout, 'rev-parse', 'svc/landed')).toBe(landed)
    expect(sh(repos.checkout, 'branch', '--list', 'svc/landed-*')).toBe('')
  })

  it("svc's own repository is made by the first host reads, however many come at once", async () => {
    // Several agents, each read 16 times at once (two inits on one directory collide on its lock).
    for (const name of ['lazy-a', 'lazy-b', 'lazy-c', 'lazy-d', 'lazy-e', 'lazy-f']) {
      const ws = await repos.addAgent(name)
      const tip = commitFile(ws.path, 'lazy.txt', 'work\n')
      expect(existsSync(ws.paths.hostDir)).toBe(false)
      const rec = readRecord(ws.paths)!
      await Promise.all(Array.from({length: 16}, () => prepareHostRead(ws.paths, rec)))
      // A bare repository that reads the agent's objects through its alternates.
      expect(await hostGit(ws.paths, ['cat-file', '-t', tip])).toBe('commit')
      expect(readFileSync(join(ws.paths.hostDir, 'objects', 'info', 'alternates'), 'utf8')).toContain(join(ws.paths.gitDir, 'objects'))
    }
  })

  it('removeBranch (undoing a failed create) keeps nothing', async () => {
    const ws = await repos.addAgent('undo')
    commitFile(ws.path, 'x.txt', 'x\n')
    await removeWorkspace(ws.paths, ws, {removeBranch: true})
    expect(() => sh(repos.checkout, 'rev-parse', '--verify', '-q', 'refs/heads/svc/undo')).toThrow()
  })

  it('a clone of the remote: unpushed commits are kept in kept-branches, an untouched one keeps nothing', async () => {
    const paths = agentRepoPaths(repos.stateDir, 'cl')
    const ws = (await createWorkspace({gitRemote: repos.remote, branch: 'svc/cl'}, paths))!
    expect(ws).toMatchObject({branch: 'svc/cl', baseRef: 'main', baseCommit: sh(repos.remote, 'rev-parse', 'main')})
    const tip = commitFile(ws.path, 'cl.txt', 'only here\n')
    const kept = await removeWorkspace(paths, ws)
    expect(kept).toBe(keptRepoPath(paths))
    expect(sh(kept!, 'rev-parse', 'refs/heads/svc/cl')).toBe(tip)
    const paths2 = agentRepoPaths(repos.stateDir, 'cl2')
    const ws2 = (await createWorkspace({gitRemote: repos.remote, branch: 'svc/cl2'}, paths2))!
    expect(await removeWorkspace(paths2, ws2)).toBeNull()
  })

  it('made from a subdirectory of the checkout: its branch from HEAD; a dirty, detached or unborn checkout, a bad or taken name are refused and nothing is made', async () => {
    const paths = (id: string) => agentRepoPaths(repos.stateDir, id)
    const refusal = (id: string, branch: string, checkout = join(repos.checkout, 'src')) =>
      createWorkspace({checkout, branch}, paths(id)).then(
        () => ({code: 'made'}),
        (err) => ({code: err.code, details: err.details}),
      )
    const ws = (await createWorkspace({checkout: join(repos.checkout, 'src'), branch: 'svc/sub'}, paths('sub')))!
    expect(ws).toMatchObject({branch: 'svc/sub', baseRef: 'main', baseCommit: sh(repos.checkout, 'rev-parse', 'HEAD')})
    expect(sh(ws.path, 'status', '--porcelain')).toBe('')
    expect(readFileSync(join(ws.path, 'src', 'app.ts'), 'utf8')).toContain('export const a = 1')
    expect(await refusal('bad', 'svc/a..b')).toMatchObject({code: 'workspace_failed'})
    // Names past the quick check go to git: refused as git refuses them, or made.
    expect(await refusal('bad', 'svc/x.lock')).toMatchObject({code: 'workspace_failed'})
    expect(await refusal('bad', 'svc/sub~1')).toMatchObject({code: 'workspace_failed'})
    expect((await createWorkspace({checkout: repos.checkout, branch: 'svc/v1.2@x'}, paths('dotted')))?.branch).toBe('svc/v1.2@x')
    sh(repos.checkout, 'branch', 'svc/exists')
    expect(await refusal('exists', 'svc/exists')).toMatchObject({code: 'branch_exists', details: {branch: 'svc/exists'}})
    // Paths are the checkout's, whatever directory the project names; a rename names its new path.
    writeFileSync(join(repos.checkout, 'src', 'app.ts'), 'changed\n')
    sh(repos.checkout, 'mv', 'src/old-name.ts', 'src/new name.ts')
    expect(await refusal('dirty', 'svc/dirty')).toMatchObject({code: 'checkout_dirty', details: {files: ['src/app.ts', 'src/new name.ts']}})
    sh(repos.checkout, 'reset', '-q', '--hard')
    sh(repos.checkout, 'checkout', '-q', '--detach')
    expect(await refusal('detached', 'svc/detached')).toMatchObject({code: 'checkout_detached'})
    sh(repos.checkout, 'checkout', '-q', '--orphan', 'unborn')
    expect(await refusal('unborn', 'svc/unborn', repos.checkout)).toMatchObject({code: 'checkout_invalid'})
    expect(await refusal('none', 'svc/none', repos.root)).toMatchObject({code: 'checkout_invalid'})
    for (const id of ['bad', 'exists', 'dirty', 'detached', 'unborn', 'none']) for (const p of Object.values(paths(id)).slice(2)) expect(existsSync(p), p).toBe(false)
  })

  it('a remote that is no repository is clone_failed, and nothing is left behind', async () => {
    const paths = agentRepoPaths(repos.stateDir, 'bad')
    await expect(createWorkspace({gitRemote: `${repos.root}/nope.git`, branch: 'svc/bad'}, paths)).rejects.toMatchObject({code: 'clone_failed'})
    for (const p of [paths.workdir, paths.gitDir, paths.hostDir, paths.record]) expect(existsSync(p), p).toBe(false)
  })

  it("a child's repository starts from its parent's branch head, with the parent's objects its own", async () => {
    const lead = await repos.addAgent('lead')
    const leadTip = commitFile(lead.path, 'plan.md', 'the plan\n')
    // Uncommitted work of the parent is not the child's starting point.
    writeFileSync(join(lead.path, 'scratch.txt'), 'not committed\n')
    const paths = agentRepoPaths(repos.stateDir, 'child')
    const child = (await createWorkspace({checkout: repos.checkout, branch: 'svc/child', parent: {agentId: 'lead', branch: 'svc/lead'}}, paths))!
    expect(child).toMatchObject({branch: 'svc/child', baseRef: 'svc/lead', baseCommit: leadTip})
    expect(sh(child.path, 'rev-parse', 'HEAD')).toBe(leadTip)
    expect(readFileSync(join(child.path, 'plan.md'), 'utf8')).toBe('the plan\n')
    expect(existsSync(join(child.path, 'scratch.txt'))).toBe(false)
    // The parent going away does not take the child's history with it.
    await removeWorkspace(lead.paths, lead, {removeBranch: true})
    sh(child.path, 'fsck', '--connectivity-only', '--no-dangling')
    expect(sh(child.path, 'log', '--format=%s', '-1')).toBe('add plan.md')
  })

  it('a parent whose branch is gone or whose repository is not here is refused, and nothing is made', async () => {
    const paths = agentRepoPaths(repos.stateDir, 'orphan')
    await expect(createWorkspace({checkout: repos.checkout, branch: 'svc/orphan', parent: {agentId: 'nobody', branch: 'svc/nobody'}}, paths)).rejects.toMatchObject({code: 'workspace_missing'})
    for (const p of [paths.workdir, paths.gitDir, paths.hostDir, paths.record]) expect(existsSync(p), p).toBe(false)
  })
})

