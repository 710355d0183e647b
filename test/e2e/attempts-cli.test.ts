import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {cliEnv, runCli} from '../helpers/cli.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * The done-when of attempts with the real CLI: `svc agent create fix --attempts 2 --check ...`,
 * the passing attempt seen in `svc agent compare fix`, then `svc agent pick fix-2` lands it on
 * the user's branch and deletes fix-1, whose branch stays in the checkout. Real shell agents.
 */
describe('svc agent create --attempts / compare / pick', {timeout: 180_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-attempts-'))
  let env: NodeJS.ProcessEnv
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 60_000})

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    repos = makeRepos()
    const project = (await hub.request('GET', '/api/v1/projects/default')).body.project
    await hub.store.projects.update(project.id, {localPath: repos.checkout}, iso(new Date()))
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken, SVC_DIFFSTAT_TIMEOUT_MS: '30000'})
  })
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it('creates two attempts, checks them on idle, compares and picks the passing one', async () => {
    const created = await svc('agent', 'create', 'fix', '--attempts', '2', '--harness', 'shell', '--check', 'test -f ok.txt', 'make ok.txt')
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toBe('Agent fix-1 is running.\nAgent fix-2 is running.\nCompare them with: svc agent compare fix\n')
    const {agents} = (await hub.request('GET', '/api/v1/agents?group=fix')).body
    expect(agents.map((a: {name: string; group: string}) => [a.name, a.group])).toEqual([['fix-1', 'fix'], ['fix-2', 'fix']])

    // fix-2 does the work and commits part of it; both go idle as their harness would report.
    const [one, two] = agents
    write(two.workspace.path, 'ok.txt', 'done\n')
    write(two.workspace.path, 'README.md', '# demo\nfixed\n')
    sh(two.workspace.path, 'add', 'ok.txt')
    sh(two.workspace.path, '-c', 'user.name=a', '-c', 'user.email=a@example.com', 'commit', '-qm', 'ok')
    for (const a of [one, two]) {
      const token = (await hub.services.agentTokens.mint((await hub.store.agents.get(a.id))!)).token
      expect((await hub.request('POST', `/api/v1/agents/${a.id}/status`, {token, body: {activity: 'idle'}})).status).toBe(200)
    }
    const settled = async () => {
      const list = (await hub.request('GET', '/api/v1/agents?group=fix')).body.agents
      return list.every((a: {check: {status: string} | null}) => a.check && a.check.status !== 'running') ? list : null
    }
    await waitFor(settled, 60_000, 'both checks ran')

    const table = await svc('agent', 'compare', 'fix')
    expect(table.code, table.stderr).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ATTEMPT\s+HARNESS\s+STATE\s+CHECK\s+TURNS\s+COST\s+TIME\s+FILES\s+\+\/-$/)
    expect(lines[1]).toMatch(/^fix-1\s+shell\s+idle\s+failed \(1\)\s+0\s+\$0\.00\s+\d+s\s+0\s+\+0 -0$/)
    expect(lines[2]).toMatch(/^fix-2\s+shell\s+idle\s+passed \(0\)\s+0\s+\$0\.00\s+\d+s\s+2\s+\+2 -0$/)
    const json = await svc('agent', 'compare', 'fix', '--json')
    expect(json.code).toBe(0)
    expect(json.json.group).toBe('fix')
    expect(json.json.attempts.map((r: {name: string; check: {status: string}; filesChanged: number; added: number; deleted: number}) => [r.name, r.check.status, r.filesChanged, r.added, r.deleted])).toEqual([
      ['fix-1', 'failed', 0, 0, 0],
      ['fix-2', 'passed', 2, 2, 0],
    ])

    // Not an attempt: refused, nothing merged or deleted.
    const plain = await hub.request('POST', '/api/v1/agents', {body: {name: 'solo', projectId: one.projectId, harnessConfig: 'shell'}})
    expect(plain.status).toBe(201)
    const refused = await svc('agent', 'pick', 'solo')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('not an attempt')

    const before = sh(repos.checkout, 'rev-parse', 'main')
    const picked = await svc('agent', 'pick', 'fix-2', '--squash')
    expect(picked.code, picked.stderr).toBe(0)
    expect(picked.stdout).toMatch(/^Squashed svc\/fix-2 into main: [0-9a-f]{12} \(2 files\)\nDeleted fix-1 \(their branches are kept\)\.\n$/)
    expect(sh(repos.checkout, 'rev-parse', 'main~1')).toBe(before)
    expect(readFileSync(join(repos.checkout, 'ok.txt'), 'utf8')).toBe('done\n')
    expect(readFileSync(join(repos.checkout, 'README.md'), 'utf8')).toBe('# demo\nfixed\n')
    expect(sh(repos.checkout, 'branch', '--list', 'svc/fix-1')).toContain('svc/fix-1')
    expect(existsSync(one.workspace.path)).toBe(false)
    const after = await svc('agent', 'compare', 'fix', '--json')
    expect(after.json.attempts.map((r: {name: string}) => r.name)).toEqual(['fix-2'])
  })
})
