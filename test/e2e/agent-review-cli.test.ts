import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {cliEnv, runCli} from '../helpers/cli.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

const normalise = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>').replace(/\b[0-9a-f]{12}\b/g, '<sha>')

/**
 * The done-when of the review issue with the real CLI: an agent that changed two files and added
 * one is diffed and squash-merged; a conflicting second agent is refused with the file named and
 * the checkout unchanged; the branch is pushed; the list shows branches and counts.
 */
describe('svc agent diff / merge / push / list against a Hub with real worktrees', {timeout: 180_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-review-'))
  let env: NodeJS.ProcessEnv
  const ids: Record<string, string> = {}
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 60_000})

  /** An agent made through the API: dispatch makes its worktree of the project's checkout. */
  async function agent(name: string) {
    const project = (await hub.request('GET', '/api/v1/projects/default')).body.project
    await hub.store.projects.update(project.id, {localPath: repos.checkout}, iso(new Date()))
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId: project.id, harnessConfig: 'shell'}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    const ws = r.body.agent.workspace
    expect(ws).toMatchObject({branch: `svc/${name}`, baseRef: 'main'})
    ids[name] = r.body.agent.id
    return ws.path
  }

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    repos = makeRepos()
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken, SVC_DIFFSTAT_TIMEOUT_MS: '30000'})
    const alice = await agent('alice')
    write(alice, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 30\n')
    sh(alice, 'commit', '-qam', 'c is 30')
    write(alice, 'README.md', '# demo\nby alice\n')
    write(alice, 'src/added.ts', 'export const added = 1\n')
    const bob = await agent('bob')
    write(bob, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 300\n')
  })
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it('svc agent diff shows the three files; --stat lists them with counts; --json is the Hub document', async () => {
    const stat = await svc('agent', 'diff', 'alice', '--stat')
    expect(stat.code, stat.stderr).toBe(0)
    expect(normalise(stat.stdout)).toMatchSnapshot('agent diff --stat')
    const patch = await svc('agent', 'diff', 'alice')
    expect(patch.code, patch.stderr).toBe(0)
    for (const f of ['README.md', 'src/added.ts', 'src/app.ts']) expect(patch.stdout).toContain(`diff --git a/${f} b/${f}`)
    expect(patch.stdout).not.toContain('\u001b[')
    const json = await svc('agent', 'diff', ids.alice, '--json')
    expect(json.code).toBe(0)
    expect(json.json.files.map((f: {path: string}) => f.path)).toEqual(['README.md', 'src/added.ts', 'src/app.ts'])
    expect(json.json.head.branch).toBe('svc/alice')
  })

  it('svc agent list shows each agent\'s branch and +added -deleted', async () => {
    const r = await svc('agent', 'list')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^alice\s+running\S*\s+.*svc\/alice\s+\+3 -1\s+-\s/m)
    expect(r.stdout).toMatch(/^bob\s+running\S*\s+.*svc\/bob\s+\+1 -1\s+-\s/m)
  })

  it('svc agent merge --squash lands them in one commit; the conflicting second agent exits 1 naming the file and changes nothing', async () => {
    const before = sh(repos.checkout, 'rev-parse', 'main')
    const r = await svc('agent', 'merge', 'alice', '--squash', '-m', 'Land alice')
    expect(r.code, r.stderr).toBe(0)
    expect(normalise(r.stdout)).toBe('Squashed svc/alice into main: <sha> (3 files)\n')
    expect(sh(repos.checkout, 'rev-list', '--count', `${before}..main`)).toBe('1')
    expect(sh(repos.checkout, 'log', '-1', '--format=%s|%an')).toBe('Land alice|alice')
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')

    const fingerprint = repos.fingerprint()
    const refused = await svc('agent', 'merge', 'bob', '--json')
    expect(refused.code).toBe(1)
    expect(refused.json.error).toMatchObject({code: 'merge_conflict', details: {files: ['src/app.ts']}})
    const human = await svc('agent', 'merge', 'bob')
    expect(human.code).toBe(1)
    expect(human.stderr).toContain('src/app.ts')
    expect(repos.fingerprint()).toBe(fingerprint)
    // The list marks what landed (LANDED): alice's merge, not bob's refused one.
    const list = await svc('agent', 'list')
    expect(list.stdout).toMatch(/^alice\s.*svc\/alice\s+\S+ \S+\s+merged\s/m)
    expect(list.stdout).toMatch(/^bob\s.*svc\/bob\s+\S+ \S+\s+-\s/m)
  })

  it('svc agent push pushes the branch and prints where; an unknown agent exits 1', async () => {
    const r = await svc('agent', 'push', 'alice')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe(`Pushed svc/alice (${sh(repos.checkout, 'rev-parse', 'svc/alice').slice(0, 12)}) to origin: ${repos.remote}\n`)
    expect(sh(repos.remote, 'rev-parse', 'svc/alice')).toBe(sh(repos.checkout, 'rev-parse', 'svc/alice'))
    const missing = await svc('agent', 'merge', 'nobody', '--json')
    expect(missing.code).toBe(1)
    expect(missing.json.error.code).toBe('not_found')
  })
})
