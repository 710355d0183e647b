import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {HubClient} from '../../src/client/hub-client.js'
import {compareAttempts, pickAttempt} from '../../src/cli/attempts.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

/**
 * Teams, attempts (CONTRACT.md "Teams"): `attempts: N` makes <name>-1..N in one group, the check
 * runs in each attempt's own sandbox whenever it goes idle, compare shows them side by side and
 * pick merges one and deletes the others (branches kept). Real shell agents on the co-located
 * broker (bubblewrap).
 */
describeEachDialect('teams: attempts', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let projectId: string
  let client: HubClient

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    checkout = mkdtempSync(join(tmpdir(), 'svc-attempts-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# attempts\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'attempts', localPath: checkout}})).body.project.id
    client = new HubClient(hub.url, hub.config.devToken)
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })
  const tokenOf = async (id: string) => (await hub.services.agentTokens.mint((await hub.store.agents.get(id))!)).token
  const names = async (group: string) => (await hub.request('GET', `/api/v1/agents?projectId=${projectId}&group=${group}`)).body.agents.map((a: {name: string}) => a.name)

  it('bad attempts change nothing: out of range, a name taken, a harness refused after the first was made', async () => {
    for (const attempts of [0, 21, 1.5]) {
      const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'bad', projectId, harnessConfig: 'shell', attempts}})
      expect(r.status, JSON.stringify(r.body)).toBe(400)
    }
    const noAttempts = await hub.request('POST', '/api/v1/agents', {body: {name: 'bad', projectId, harnessConfigs: ['shell']}})
    expect(noAttempts.status).toBe(400)
    // The second attempt's harness is unknown: the first, already made, is removed again.
    const partial = await hub.request('POST', '/api/v1/agents', {body: {name: 'bad', projectId, harnessConfigs: ['shell', 'nope'], attempts: 2}})
    expect(partial.status, JSON.stringify(partial.body)).toBe(400)
    expect(partial.body.error.message).toContain('nope')
    expect(await names('bad')).toEqual([])
    expect((await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents).toEqual([])
    // A name taken by an existing agent: refused before anything is made.
    expect((await hub.request('POST', '/api/v1/agents', {body: {name: 'taken-2', projectId, harnessConfig: 'shell'}})).status).toBe(201)
    const clash = await hub.request('POST', '/api/v1/agents', {body: {name: 'taken', projectId, harnessConfig: 'shell', attempts: 3}})
    expect(clash.status).toBe(409)
    expect(await names('taken')).toEqual([])
    expect((await hub.request('DELETE', `/api/v1/projects/${projectId}/agents/taken-2`)).status).toBe(200)
  }, 120_000)

  it('two attempts with a check: passed and failed on idle, compared, and the passing one picked', async () => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'fix', projectId, harnessConfigs: ['shell'], attempts: 2, check: `touch ${join(checkout, 'escaped')} 2>/dev/null; test -f ok.txt && echo found ok.txt`, task: 'make ok.txt'}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    expect(r.body.group).toBe('fix')
    const [one, two] = r.body.agents
    expect(one).toMatchObject({name: 'fix-1', group: 'fix', harnessConfig: 'shell', phase: 'running', check: null})
    expect(two).toMatchObject({name: 'fix-2', group: 'fix', harnessConfig: 'shell', phase: 'running', check: null})
    expect(await names('fix')).toEqual(['fix-1', 'fix-2'])
    expect(await names('fi')).toEqual([])

    // Attempt 1 does the work; both then report idle as their harness would.
    writeFileSync(join(one.workspace.path, 'ok.txt'), 'done\n')
    for (const a of [one, two]) {
      const s = await hub.request('POST', `/api/v1/agents/${a.id}/status`, {token: await tokenOf(a.id), body: {activity: 'idle'}})
      expect(s.status).toBe(200)
    }
    const checkOf = async (id: string) => {
      const c = (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent.check
      return c && c.status !== 'running' ? c : null
    }
    expect(await waitFor(() => checkOf(one.id), 60_000, 'fix-1 checked')).toEqual({status: 'passed', exitCode: 0, output: 'found ok.txt\n'})
    expect(await waitFor(() => checkOf(two.id), 60_000, 'fix-2 checked')).toMatchObject({status: 'failed', exitCode: 1})

    // The check ran (it saw ok.txt) inside the attempt's sandbox: the host's checkout was out of its reach.
    expect(existsSync(join(checkout, 'escaped'))).toBe(false)

    const rows = await compareAttempts(client, projectId, 'fix')
    expect(rows.map((x) => [x.name, x.check?.status, x.filesChanged, x.added, x.deleted])).toEqual([
      ['fix-1', 'passed', 1, 1, 0],
      ['fix-2', 'failed', 0, 0, 0],
    ])

    const picked = await pickAttempt(client, projectId, 'fix-1')
    expect(picked).toMatchObject({picked: 'fix-1', deleted: ['fix-2'], merge: {merged: true, branch: 'svc/fix-1', baseRef: 'main'}})
    expect(readFileSync(join(checkout, 'ok.txt'), 'utf8')).toBe('done\n')
    expect(await names('fix')).toEqual(['fix-1'])
    expect((await hub.request('GET', `/api/v1/agents/${two.id}`)).status).toBe(404)
    // The other attempt's branch is kept in the checkout.
    expect(git(checkout, 'branch', '--list', 'svc/fix-2')).toContain('svc/fix-2')
    expect(existsSync(two.workspace.path)).toBe(false)
  }, 240_000)
})
