import {existsSync} from 'node:fs'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {makeRepos, sh, write, type TestRepos} from '../../../test/helpers/git-repos.js'
import {removeWorkspaceAndBranch} from './branch-removal.js'
import {mergeWorkspace} from './merge.js'
import {removeWorkspace} from './repository.js'

const who = {agent: {id: 'a1', name: 'alice'}, author: {name: 'alice', email: 'a1@svc'}, committer: {name: 'Developer', email: 'dev@localhost'}}
const has = (checkout: string, branch: string) => sh(checkout, 'branch', '--list', branch) !== ''

describe('deleting an agent with --branch: its branch goes once merged, else it is kept and the answer says why', () => {
  let repos: TestRepos
  beforeEach(() => (repos = makeRepos()))
  afterEach(() => repos.dispose())

  async function committed(slug: string) {
    const ws = await repos.addAgent(slug)
    write(ws.path, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 30\n')
    sh(ws.path, 'commit', '-qam', 'agent: c is 30')
    write(ws.path, 'notes.md', 'left uncommitted\n')
    return ws
  }

  for (const strategy of ['merge', 'squash'] as const) {
    it(`merged (${strategy}): the checkout's svc/<name> and the agent's repository go`, async () => {
      const ws = await committed(strategy)
      await mergeWorkspace({paths: ws.paths, workspace: ws, strategy, ...who})
      expect(has(repos.checkout, ws.branch)).toBe(true)
      const r = await removeWorkspaceAndBranch(ws.paths, ws)
      expect(r).toEqual({kept: null, branch: {name: ws.branch, deleted: true}})
      expect(has(repos.checkout, ws.branch)).toBe(false)
      expect(existsSync(ws.paths.gitDir) || existsSync(ws.path)).toBe(false)
      expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')
    })
  }

  it('not merged: kept in the checkout as a plain delete keeps it, with the reason', async () => {
    const ws = await committed('open')
    const tip = sh(ws.path, 'rev-parse', 'HEAD')
    const r = await removeWorkspaceAndBranch(ws.paths, ws)
    expect(r.branch).toMatchObject({name: 'svc/open', deleted: false})
    expect(r.branch.reason).toMatch(/not merged into main/)
    expect(sh(repos.checkout, 'rev-parse', 'svc/open')).toBe(tip)
    expect(existsSync(ws.paths.gitDir)).toBe(false)
  })

  it('control: without --branch a merged branch stays in the checkout', async () => {
    const ws = await committed('plain')
    await mergeWorkspace({paths: ws.paths, workspace: ws, strategy: 'merge', ...who})
    await removeWorkspace(ws.paths, ws, {checkout: repos.checkout})
    expect(has(repos.checkout, 'svc/plain')).toBe(true)
  })

  it('an agent that never committed: nothing on its branch, so it goes', async () => {
    const ws = await repos.addAgent('idle')
    expect(await removeWorkspaceAndBranch(ws.paths, ws)).toEqual({kept: null, branch: {name: 'svc/idle', deleted: true}})
    expect(has(repos.checkout, 'svc/idle')).toBe(false)
  })

  it("merged, but the checkout has svc/<name> checked out: kept, and said so", async () => {
    const ws = await committed('busy')
    await mergeWorkspace({paths: ws.paths, workspace: ws, strategy: 'merge', ...who})
    sh(repos.checkout, 'checkout', '-q', 'svc/busy')
    const r = await removeWorkspaceAndBranch(ws.paths, ws)
    expect(r.branch).toEqual({name: 'svc/busy', deleted: false, reason: 'svc/busy is checked out in the checkout'})
    expect(has(repos.checkout, 'svc/busy')).toBe(true)
  })
})
