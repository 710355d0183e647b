import {existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {makeRepos, sh, type TestRepos} from '../../../test/helpers/git-repos.js'
import {agentRepoPaths} from './agent-repo.js'
import {checkoutGuess} from './checkout-head.js'
import {createWorkspace} from './repository.js'

describe("the checkout's branch and commit read from its files (checkout-head.ts)", () => {
  let repos: TestRepos
  beforeEach(() => (repos = makeRepos()))
  afterEach(() => repos.dispose())

  it('are what git says, from a loose or a packed ref', () => {
    const head = sh(repos.checkout, 'rev-parse', 'HEAD')
    const want = {root: realpathSync(repos.checkout), objects: realpathSync(join(repos.checkout, '.git', 'objects')), branch: 'main', commit: head}
    expect(checkoutGuess(repos.checkout)).toEqual(want)
    sh(repos.checkout, 'pack-refs', '--all')
    expect(existsSync(join(repos.checkout, '.git', 'refs', 'heads', 'main'))).toBe(false)
    expect(checkoutGuess(repos.checkout)).toEqual(want)
  })

  it('are no guess for a detached HEAD, a worktree, a subdirectory or a linked HEAD', () => {
    sh(repos.checkout, 'checkout', '-q', '--detach')
    expect(checkoutGuess(repos.checkout)).toBeNull()
    sh(repos.checkout, 'checkout', '-q', 'main')
    expect(checkoutGuess(join(repos.checkout, 'src'))).toBeNull()
    const tree = join(repos.root, 'tree')
    sh(repos.checkout, 'worktree', 'add', '-q', '-b', 'other', tree)
    expect(checkoutGuess(tree)).toBeNull()
    const dir = mkdtempSync(join(tmpdir(), 'svc-head-'))
    try {
      writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n')
      unlinkSync(join(repos.checkout, '.git', 'HEAD'))
      symlinkSync(join(dir, 'HEAD'), join(repos.checkout, '.git', 'HEAD'))
      expect(checkoutGuess(repos.checkout)).toBeNull()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('made while git checks the checkout: kept when git agrees, removed when it refuses', async () => {
    const paths = (id: string) => agentRepoPaths(repos.stateDir, id)
    const ws = (await createWorkspace({checkout: repos.checkout, branch: 'svc/ok'}, paths('ok')))!
    expect(ws).toMatchObject({branch: 'svc/ok', baseRef: 'main', baseCommit: sh(repos.checkout, 'rev-parse', 'HEAD')})
    expect(sh(ws.path, 'status', '--porcelain')).toBe('')
    sh(repos.checkout, 'branch', 'svc/taken')
    await expect(createWorkspace({checkout: repos.checkout, branch: 'svc/taken'}, paths('taken'))).rejects.toMatchObject({code: 'branch_exists'})
    writeFileSync(join(repos.checkout, 'README.md'), 'changed\n')
    await expect(createWorkspace({checkout: repos.checkout, branch: 'svc/dirty'}, paths('dirty'))).rejects.toMatchObject({code: 'checkout_dirty'})
    for (const id of ['taken', 'dirty']) for (const p of Object.values(paths(id)).slice(2)) expect(existsSync(p), p).toBe(false)
  })
})
