import {randomBytes} from 'node:crypto'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {BIN, cliEnv, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {waitFor} from '../helpers/live-hub.js'
import {createNetns, netnsSupport, type NetNs} from '../helpers/netns.js'
import {startBrokerIn, type NetnsBroker} from '../helpers/netns-broker.js'
import {createPrivatePg, postgresBin, type PrivatePg} from '../helpers/private-pg.js'

/**
 * A PostgreSQL restart under a hosted deployment (CONTRACT "Hosted at scale": `/readyz`, losing
 * database connections never ends the process): two hosted replicas on a private PostgreSQL
 * cluster of this test's own (test/helpers/private-pg.ts; the shared server on :5432 is never
 * touched), a broker on another host (a network namespace of its own, test/helpers/netns.ts)
 * reaching them over its veth link, a shell agent running. A fast restart, then a ~15 s outage: `/readyz`
 * answers 503 on both replicas while the database is down and 200 after, no replica process
 * exits, the agent is reached through either replica after, and a report the agent made during
 * the outage (`svc status`, as its hooks would) arrives once the database is back.
 */
vi.setConfig({testTimeout: 120_000, hookTimeout: 120_000})

const bin = postgresBin()
const ns = netnsSupport()
const why = !bin ? ' (SKIPPED: no PostgreSQL server binaries in /usr/lib/postgresql)' : !ns.ok ? ` (SKIPPED: ${ns.reason})` : ''

describe.skipIf(!bin || !ns.ok)(`hosted replicas through a PostgreSQL restart, the broker on another host${why}`, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-pgrestart-'))
  const stateDir = mkdtempSync(join(tmpdir(), 'svc-e2e-pgrestart-broker-'))
  let pg: PrivatePg
  const replicas: RunningServer[] = []
  let broker: NetnsBroker | null = null
  let space: NetNs | null = null
  /** A replica's URL as the broker's host (and its agent) reaches it: over the veth link. */
  const fromBroker = (r: RunningServer) => `http://${space!.hostIp}:${r.port}`
  let token = ''
  let agent: {id: string}

  const api = (r: RunningServer, method: string, path: string, body?: unknown) =>
    requestJson<any>(method, `${r.url}${path}`, {token, body, timeoutMs: 10_000}).catch((err) => ({status: err.status ?? 0, body: err}))
  const ready = async (r: RunningServer) => (await fetch(`${r.url}/readyz`, {signal: AbortSignal.timeout(5_000)}).catch(() => null))?.status ?? 0
  const alive = () => {
    for (const r of replicas) expect(r.child.exitCode, `replica exited: ${r.stderr().slice(-2000)}`).toBeNull()
    expect(broker?.child.exitCode, `broker exited: ${broker?.stderr().slice(-2000)}`).toBeNull()
  }
  /** Typing into the agent's terminal works through every replica (its broker holds one tunnel). */
  const reachable = async (tag: string) => {
    for (const [i, r] of replicas.entries()) {
      await waitFor(async () => (await api(r, 'POST', `/api/v1/agents/${agent.id}/keys`, {keys: `echo ${tag}-${i}-$((1+1))\r`})).status === 200, 30_000, `keys through replica ${i} after ${tag}`)
      await waitFor(async () => String((await api(r, 'GET', `/api/v1/agents/${agent.id}/logs`)).body).includes(`${tag}-${i}-2`), 20_000, `${tag} output read through replica ${i}`)
    }
  }
  const pane = () => spawnSync('tmux', ['-L', 'svc', 'capture-pane', '-p', '-t', `=svc-${agent.id}:`], {env: {...process.env, TMUX_TMPDIR: stateDir}, encoding: 'utf8'}).stdout ?? ''
  const report = (detail: string) => `${process.execPath} ${BIN} status thinking --detail ${detail}`
  const detailIs = (r: RunningServer, detail: string) => waitFor(async () => (await api(r, 'GET', `/api/v1/agents/${agent.id}`)).body.agent?.detail === detail, 45_000, `the report ${detail}`)

  beforeAll(async () => {
    pg = await createPrivatePg(bin!)
    const env = cliEnv(home, {
      SVC_SERVER_DATABASE_DRIVER: 'postgres',
      SVC_SERVER_DATABASE_URL: pg.url,
      SVC_SERVER_AUTH_DEVMODE: 'true',
      SVC_SECRETS_KEY: randomBytes(32).toString('hex'),
    })
    // One after the other: the first migrates the new database.
    // Listening on every address: the broker reaches them over its veth link.
    for (let i = 0; i < 2; i++) replicas.push(await startServerProcess(['--hosted', '--host', '0.0.0.0'], env, 90_000))
    token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const projectId = (await api(replicas[0], 'POST', '/api/v1/projects/register', {name: 'pgrestart'})).body.project.id
    const {joinToken} = (await api(replicas[0], 'POST', '/api/v1/brokers/register', {name: 'host'})).body
    space = createNetns()
    broker = await startBrokerIn(space, {home, hubs: replicas.map(fromBroker), stateDir, joinToken})
    // Created through the second replica: the first holds the broker's tunnel (its first URL).
    const created = await waitFor(async () => {
      const r = await api(replicas[1], 'POST', '/api/v1/agents', {projectId, harnessConfig: 'shell', name: 'steady'})
      return r.status === 201 ? r.body.agent : undefined
    }, 30_000, 'the agent created')
    expect(created.phase).toBe('running')
    agent = created
  })

  afterAll(async () => {
    if (broker && broker.child.exitCode === null) {
      const gone = new Promise((r) => broker!.child.once('exit', r))
      broker.child.kill('SIGKILL')
      await gone
    }
    spawnSync('tmux', ['-L', 'svc', 'kill-server'], {env: {...process.env, TMUX_TMPDIR: stateDir}})
    for (const r of replicas) await r.stop('SIGKILL')
    await pg?.dispose()
    space?.dispose()
    for (const d of [home, stateDir]) rmSync(d, {recursive: true, force: true})
  })

  it('pg_ctl restart -m fast: both replicas ready again, still running, the agent reached and reporting through either', async () => {
    await reachable('before')
    await pg.restart()
    for (const r of replicas) await waitFor(async () => (await ready(r)) === 200, 20_000, 'ready after the restart')
    alive()
    await reachable('after-restart')
    expect((await api(replicas[1], 'POST', `/api/v1/agents/${agent.id}/keys`, {keys: `${report('after-restart')}\r`})).status).toBe(200)
    await detailIs(replicas[1], 'after-restart')
    alive()
  })

  it('down for ~15 s: /readyz 503 on both while down, 200 after; a report made during the outage arrives; nothing exited', async () => {
    // The agent reports as soon as it sees the outage itself (the first replica's /readyz), then
    // prints that it tried: the report is made while no replica can store it. Its terminal is
    // read from tmux here (the logs route needs the database too).
    const line = `until [ "$(curl -s -o /dev/null -w '%{http_code}' ${fromBroker(replicas[0])}/readyz)" = 503 ]; do sleep 0.2; done; ${report('during-outage')}; echo "tried-exit=$?"\r`
    expect((await api(replicas[0], 'POST', `/api/v1/agents/${agent.id}/keys`, {keys: line})).status).toBe(200)
    await pg.stop()
    const downAt = Date.now()
    for (const r of replicas) await waitFor(async () => (await ready(r)) === 503, 15_000, 'not ready while the database is down')
    await waitFor(() => /tried-exit=\d/.test(pane()), 30_000, 'the agent tried to report')
    // Still down after the agent tried: no replica could have stored the report.
    for (const r of replicas) expect(await ready(r)).toBe(503)
    // A request that needs the database answers as /readyz does, 503 not_ready (the CLI then
    // tries another replica), never a 500 internal_error.
    for (const r of replicas) {
      const got = await api(r, 'GET', `/api/v1/agents/${agent.id}`)
      expect({status: got.status, code: got.body?.code}).toEqual({status: 503, code: 'not_ready'})
    }
    alive()
    await new Promise((r) => setTimeout(r, Math.max(0, 15_000 - (Date.now() - downAt))))
    await pg.start()
    for (const r of replicas) await waitFor(async () => (await ready(r)) === 200, 20_000, 'ready once the database is back')
    await detailIs(replicas[0], 'during-outage')
    await detailIs(replicas[1], 'during-outage')
    await reachable('after-outage')
    alive()
  })
})
