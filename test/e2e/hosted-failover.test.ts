import {randomBytes} from 'node:crypto'
import type {ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {BIN, cliEnv, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {waitFor} from '../helpers/live-hub.js'
import {createNetns, netnsSupport, type NetNs} from '../helpers/netns.js'
import {startBrokerIn, type NetnsBroker} from '../helpers/netns-broker.js'
import {createPgSchema, pgAvailable, pgUrl} from '../helpers/pg.js'

/**
 * Hosted at scale across hosts (CONTRACT "Hosted at scale"): two hosted replicas on one
 * PostgreSQL database, two brokers each in a network namespace of its own (test/helpers/netns.ts)
 * given both replicas' URLs over their veth link. Keys, logs, a message and the diff of an agent
 * work through the replica that does not hold its broker. Killing (-9) the replica that holds the brokers
 * moves them to the survivor and their agents' reports still arrive; killing a broker makes its
 * agent offline (an event) and its restart re-adopts the session (the agent comes back).
 * Waits are liveness bounds on a loaded machine; the failover time is measured by
 * `npm run bench -- scale`.
 */
vi.setConfig({testTimeout: 180_000, hookTimeout: 180_000})

const ns = netnsSupport()
const pgOk = await pgAvailable()
const skip = !ns.ok || !pgOk
const why = !ns.ok ? ` (SKIPPED: ${ns.reason})` : !pgOk ? ' (SKIPPED: no PostgreSQL)' : ''


describe.skipIf(skip)(`two replicas, two brokers in their own network namespaces${why}`, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-scale-'))
  let schema: Awaited<ReturnType<typeof createPgSchema>>
  const replicas: RunningServer[] = []
  const spaces: NetNs[] = []
  const brokers: NetnsBroker[] = []
  const dirs: string[] = [home]
  let token = ''
  let projectId = ''
  const agents: string[] = []
  let repos: TestRepos

  const api = async (r: RunningServer, method: string, path: string, body?: unknown) => requestJson<any>(method, `${r.url}${path}`, {token, body, timeoutMs: 15_000})
  const brokerView = async (r: RunningServer, id: string) => (await api(r, 'GET', `/api/v1/brokers/${id}`)).body.broker

  /** `svc broker start` inside a namespace with every replica's URL as the host side of its link reaches it. */
  const startBroker = (space: NetNs, stateDir: string, joinToken?: string) =>
    startBrokerIn(space, {home, hubs: replicas.map((r) => `http://${space.hostIp}:${r.port}`), stateDir, joinToken})

  const kill9 = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const gone = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await gone
  }

  beforeAll(async () => {
    schema = await createPgSchema()
    const env = cliEnv(home, {
      SVC_SERVER_DATABASE_DRIVER: 'postgres',
      SVC_SERVER_DATABASE_URL: schema.url,
      SVC_SERVER_AUTH_DEVMODE: 'true',
      SVC_SECRETS_KEY: randomBytes(32).toString('hex'),
    })
    // Listening on every address: the brokers reach them over their veth links.
    for (let i = 0; i < 2; i++) replicas.push(await startServerProcess(['--hosted', '--host', '0.0.0.0'], env, 90_000))
    const {readFileSync} = await import('node:fs')
    token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    // Agents' workspaces are clones of a bare repository (the brokers share this file system).
    repos = makeRepos()
    projectId = (await api(replicas[0], 'POST', '/api/v1/projects/register', {name: 'scale', gitRemote: repos.remote})).body.project.id
    for (let i = 0; i < 2; i++) {
      spaces.push(createNetns())
      const stateDir = mkdtempSync(join(tmpdir(), 'svc-e2e-scale-broker-'))
      dirs.push(stateDir)
      const {joinToken} = (await api(replicas[i], 'POST', '/api/v1/brokers/register', {name: `host-${i}`})).body
      brokers.push(await startBroker(spaces[i], stateDir, joinToken))
    }
  })

  afterAll(async () => {
    for (const b of brokers) await kill9(b.child)
    // The brokers' tmux servers (their agents) run inside the namespaces, under the state dirs.
    const {spawnSync} = await import('node:child_process')
    for (const d of dirs) spawnSync('tmux', ['-L', 'svc', 'kill-server'], {env: {...process.env, TMUX_TMPDIR: d}})
    for (const r of replicas) await r.stop('SIGKILL')
    for (const s of spaces) s.dispose()
    await schema?.drop()
    for (const d of dirs) rmSync(d, {recursive: true, force: true})
    repos?.dispose()
  })

  it('brokers joined through either replica hold one tunnel, to the first URL; each runs an agent', async () => {
    for (const b of brokers) {
      // Online on both replicas (the database is shared), held by the first URL's replica.
      for (const r of replicas) await waitFor(async () => (await brokerView(r, b.brokerId)).status === 'online', 30_000, 'broker online')
    }
    for (const [i, b] of brokers.entries()) {
      const r = await api(replicas[0], 'POST', '/api/v1/agents', {projectId, harnessConfig: 'shell', name: `on-host-${i}`, brokerId: b.brokerId})
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      expect(r.body.agent).toMatchObject({phase: 'running', brokerId: b.brokerId})
      agents.push(r.body.agent.id)
    }
  })

  it('through the replica that does not hold the brokers: keys, logs, a message and the diff of an agent on a broker in its own namespace', async () => {
    const [holder, other] = replicas
    // Both brokers' tunnels are on the first replica (their first URL): its port is in the URL
    // of their lease holder in the replica directory.
    const client = new pg.Client({connectionString: pgUrl()})
    await client.connect()
    try {
      for (const b of brokers) {
        const held = await waitFor(async () => (await client.query(`select r.url from ${schema.schema}.brokers b join ${schema.schema}.replicas r on r.id = b.lease_holder where b.id = $1`, [b.brokerId])).rows[0]?.url as string | undefined, 30_000, 'the broker\'s holder')
        expect(new URL(held).port).toBe(String(holder.port))
      }
    } finally {
      await client.end()
    }
    // The other replica learns who holds them through the database (its directory's refresh).
    for (const b of brokers) await waitFor(async () => (await brokerView(other, b.brokerId)).connected === true, 30_000, 'the other replica sees the broker held')
    const id = agents[1]
    const logs = async () => String((await api(other, 'GET', `/api/v1/agents/${id}/logs`)).body)
    const keys = await api(other, 'POST', `/api/v1/agents/${id}/keys`, {keys: 'echo fwd-keys-$((6*7))\r'})
    expect(keys.status, JSON.stringify(keys.body)).toBe(200)
    await waitFor(async () => (await logs()).includes('fwd-keys-42'), 30_000, 'the keys\' output in the logs read through the other replica')
    const msg = await api(other, 'POST', `/api/v1/agents/${id}/message`, {message: 'echo fwd-msg-$((7*8))'})
    expect(msg.status, JSON.stringify(msg.body)).toBe(202)
    await waitFor(async () => (await logs()).includes('fwd-msg-56'), 30_000, 'the message delivered through the other replica')
    await waitFor(async () => (await api(other, 'GET', `/api/v1/agents/${id}/messages`)).body.messages?.[0]?.delivery === 'delivered', 30_000, 'the message marked delivered')
    // A commit in the agent's workspace (its clone, on this shared file system) shows in the diff.
    const workspace = (await api(other, 'GET', `/api/v1/agents/${id}`)).body.agent.workspace.path
    write(workspace, 'fwd.txt', 'made in another namespace\n')
    sh(workspace, 'add', 'fwd.txt')
    sh(workspace, 'commit', '-qm', 'fwd')
    const diff = await api(other, 'GET', `/api/v1/agents/${id}/diff`)
    expect(diff.status, JSON.stringify(diff.body)).toBe(200)
    expect(JSON.stringify(diff.body)).toContain('fwd.txt')
    // The first replica still holds both (nothing moved to the caller).
    for (const b of brokers) expect((await brokerView(holder, b.brokerId)).status).toBe('online')
  })

  it('kill -9 of the replica holding the brokers: both brokers move to the other, and agents\' reports arrive there', async () => {
    const [dead, survivor] = replicas
    await kill9(dead.child)
    // Dispatch through the survivor works once it holds the broker (keys reach the agent's terminal).
    for (const [i, id] of agents.entries()) {
      await waitFor(async () => (await api(survivor, 'POST', `/api/v1/agents/${id}/keys`, {keys: ' '})).status === 200, 60_000, `broker ${i} reachable through the survivor`)
      // The agent reports (as its hooks would) with `svc status`, from inside its sandbox.
      const keys = `${process.execPath} ${BIN} status thinking --detail after-failover-${i}\r`
      expect((await api(survivor, 'POST', `/api/v1/agents/${id}/keys`, {keys})).status).toBe(200)
      await waitFor(async () => (await api(survivor, 'GET', `/api/v1/agents/${id}`)).body.agent.detail === `after-failover-${i}`, 60_000, 'the report after failover')
    }
    for (const b of brokers) expect((await brokerView(survivor, b.brokerId)).status).toBe('online')
  })

  it('kill -9 of a broker: its agent goes offline (an agent event), and its restart re-adopts the session, which comes back', async () => {
    const survivor = replicas[1]
    const [b] = brokers
    const stateDir = dirs[1]
    await kill9(b.child)
    await waitFor(async () => (await brokerView(survivor, b.brokerId)).status === 'offline', 40_000, 'broker offline')
    const client = new pg.Client({connectionString: pgUrl()})
    await client.connect()
    try {
      const events = async () => (await client.query(`select activity, prev_activity from ${schema.schema}.agent_events where agent_id = $1 order by seq`, [agents[0]])).rows
      await waitFor(async () => (await events()).some((e) => e.activity === 'offline'), 40_000, 'the offline event')
      brokers[0] = await startBroker(spaces[0], stateDir)
      expect(brokers[0].brokerId).toBe(b.brokerId)
      await waitFor(async () => (await brokerView(survivor, b.brokerId)).status === 'online', 60_000, 'broker back')
      const back = await waitFor(async () => (await events()).find((e) => e.prev_activity === 'offline'), 30_000, 'the back event')
      expect(back.activity).toBe('thinking')
      // Re-adopted, not restarted: the agent is running and its terminal still has the earlier output.
      expect((await api(survivor, 'GET', `/api/v1/agents/${agents[0]}`)).body.agent.phase).toBe('running')
      const logs = await api(survivor, 'GET', `/api/v1/agents/${agents[0]}/logs`)
      expect(String(logs.body)).toContain('after-failover-0')
    } finally {
      await client.end()
    }
  })
})
