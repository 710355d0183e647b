import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {makeRepos, sh, write, type TestAgentWorkspace, type TestRepos} from '../../../test/helpers/git-repos.js'
import {mergeWorkspace, type MergeRequest} from './merge.js'

// The committer the Hub sends (the person's Hub identity): only a fallback, the checkout's git config (Dev, git-repos.ts) wins.
const who = {agent: {id: 'agent-1', name: 'alice'}, author: {name: 'alice', email: 'agent-1@svc'}, committer: {name: 'Developer', email: 'dev@localhost'}}

describe('mergeWorkspace: landing an agent branch on the checkout', () => {
  let repos: TestRepos
  beforeEach(() => (repos = makeRepos()))
  afterEach(() => repos.dispose())
  const req = (workspace: TestAgentWorkspace, extra: Partial<MergeRequest> = {}): MergeRequest => ({paths: workspace.paths, workspace, strategy: 'merge', ...who, ...extra})

  /** Two modified files and one new one, partly committed by the agent, partly left uncommitted. */
  async function agentWork(slug: string) {
    const ws = await repos.addAgent(slug)
    write(ws.path, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 30\n')
    sh(ws.path, 'commit', '-qam', 'agent: c is 30')
    write(ws.path, 'README.md', '# demo\nby the agent\n')
    write(ws.path, 'src/added.ts', 'export const added = 1\n')
    return ws
  }

  it('squash: one commit on main holding all three files, authored by the agent, committed by the user', async () => {
    const ws = await agentWork('sq')
    const res = await mergeWorkspace(req(ws, {strategy: 'squash', message: 'Land alice'}))
    expect(res).toMatchObject({merged: true, strategy: 'squash', baseRef: 'main', branch: 'svc/sq'})
    expect(res.files.sort()).toEqual(['README.md', 'src/added.ts', 'src/app.ts'])
    expect(sh(repos.checkout, 'rev-parse', 'main')).toBe(res.commit)
    expect(sh(repos.checkout, 'log', '-1', '--format=%P|%an <%ae>|%cn <%ce>|%s', 'main')).toBe(`${ws.baseCommit}|alice <agent-1@svc>|Dev <dev@example.com>|Land alice`)
    // The checkout's files and index follow; nothing is left uncommitted there.
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')
    expect(sh(repos.checkout, 'show', 'HEAD:src/added.ts')).toBe('export const added = 1')
    // The agent's uncommitted work became a commit on its branch in the checkout (agent author,
    // user committer); the agent's own repository is left as it was.
    expect(sh(repos.checkout, 'log', '-1', '--format=%an|%cn|%s', 'svc/sq')).toBe('alice|Dev|Work of agent alice left uncommitted')
    expect(sh(ws.path, 'status', '--porcelain')).not.toBe('')
    // Squashed, the branch is not an ancestor of main, but merging it again changes nothing.
    await expect(mergeWorkspace(req(ws))).rejects.toMatchObject({code: 'nothing_to_merge'})
  })

  it('merge: a merge commit with the base and the agent branch as parents, even when a fast-forward was possible', async () => {
    const ws = await agentWork('mg')
    const res = await mergeWorkspace(req(ws))
    const branchTip = sh(repos.checkout, 'rev-parse', 'svc/mg')
    expect(sh(repos.checkout, 'log', '-1', '--format=%P|%an|%cn|%s', 'main')).toBe(`${ws.baseCommit} ${branchTip}|Dev|Dev|Merge branch 'svc/mg' of agent alice`)
    expect(res.commit).toBe(sh(repos.checkout, 'rev-parse', 'HEAD'))
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')
  })

  it('a base that moved on (another merge) still merges, keeping both', async () => {
    const ws = await agentWork('later')
    write(repos.checkout, 'docs/other.md', 'from someone else\n')
    sh(repos.checkout, 'add', '-A')
    sh(repos.checkout, 'commit', '-qm', 'other work')
    await mergeWorkspace(req(ws, {strategy: 'squash'}))
    expect(sh(repos.checkout, 'show', 'HEAD:docs/other.md')).toBe('from someone else')
    expect(sh(repos.checkout, 'show', 'HEAD:README.md')).toContain('by the agent')
  })

  it('a conflict is refused with the file named, and the checkout and the agent branch are byte-for-byte unchanged', async () => {
    const ws = await agentWork('conflict')
    write(repos.checkout, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 300\n')
    sh(repos.checkout, 'commit', '-qam', 'someone else changed c')
    const before = repos.fingerprint()
    const branchBefore = sh(ws.path, 'rev-parse', 'HEAD')
    const agentStatus = sh(ws.path, 'status', '--porcelain')
    await expect(mergeWorkspace(req(ws))).rejects.toMatchObject({code: 'merge_conflict', details: {files: ['src/app.ts']}})
    expect(repos.fingerprint()).toBe(before)
    expect(sh(ws.path, 'rev-parse', 'HEAD')).toBe(branchBefore)
    expect(sh(ws.path, 'status', '--porcelain')).toBe(agentStatus)
  })

  it('uncommitted checkout changes to a file the merge writes refuse it (checkout_dirty, only those files); others are kept', async () => {
    const ws = await agentWork('dirty')
    write(repos.checkout, 'README.md', 'local edit\n')
    write(repos.checkout, 'src/added.ts', 'untracked in the way\n')
    write(repos.checkout, 'docs/remove-me.md', 'unrelated local edit\n')
    const before = repos.fingerprint()
    await expect(mergeWorkspace(req(ws))).rejects.toMatchObject({code: 'checkout_dirty', details: {files: ['README.md', 'src/added.ts']}})
    expect(repos.fingerprint()).toBe(before)
    // With only the unrelated change left, the merge lands and keeps it.
    write(repos.checkout, 'README.md', '# demo\n')
    sh(repos.checkout, 'clean', '-qf', 'src/added.ts')
    await mergeWorkspace(req(ws))
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe(' M docs/remove-me.md')
    expect(sh(repos.checkout, 'show', 'HEAD:src/added.ts')).toBe('export const added = 1')
  })

  it('base not checked out, a rewritten base, and nothing to merge are refusals that change nothing', async () => {
    const ws = await agentWork('refusals')
    sh(repos.checkout, 'checkout', '-qb', 'elsewhere')
    let before = repos.fingerprint()
    await expect(mergeWorkspace(req(ws))).rejects.toMatchObject({code: 'base_not_checked_out', details: {baseRef: 'main', checkedOut: 'elsewhere'}})
    expect(repos.fingerprint()).toBe(before)
    sh(repos.checkout, 'checkout', '-q', 'main')
    write(repos.checkout, 'x.txt', 'x\n')
    sh(repos.checkout, 'add', 'x.txt')
    sh(repos.checkout, 'commit', '-qm', 'rewritten history')
    sh(repos.checkout, 'reset', '-q', '--hard', 'HEAD')
    sh(repos.checkout, 'update-ref', 'refs/heads/main', sh(repos.checkout, 'commit-tree', 'HEAD^{tree}', '-m', 'orphan'))
    sh(repos.checkout, 'reset', '-q', '--hard', 'main')
    before = repos.fingerprint()
    await expect(mergeWorkspace(req(ws))).rejects.toMatchObject({code: 'base_diverged', details: {baseRef: 'main', baseCommit: ws.baseCommit}})
    expect(repos.fingerprint()).toBe(before)
    const idle = await repos.addAgent('idle')
    await expect(mergeWorkspace(req(idle))).rejects.toMatchObject({code: 'nothing_to_merge'})
  })

  it('deleted and renamed files land too', async () => {
    const ws = await repos.addAgent('moves')
    sh(ws.path, 'mv', 'src/old-name.ts', 'src/new-name.ts')
    sh(ws.path, 'rm', '-q', 'docs/remove-me.md')
    await mergeWorkspace(req(ws, {strategy: 'squash'}))
    expect(sh(repos.checkout, 'ls-files').split('\n').sort()).toEqual(['.gitignore', 'README.md', 'logo.png', 'src/app.ts', 'src/new-name.ts'])
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')
  })
})
