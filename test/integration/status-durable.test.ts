import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, beforeEach, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {describeEachDialect} from '../helpers/hub.js'
import {FakeBroker, waitFor} from '../helpers/live-hub.js'
import {createHubDb, type HubDb} from '../helpers/restart-hub.js'

const HUB = fileURLToPath(new URL('../helpers/status-hub.ts', import.meta.url))
const ROUNDS = 6

interface HubProcess {
  child: ChildProcess
  url: string
  devToken: string
  exited: Promise<void>
}

/** Starts a Hub process on the database and HOME; resolves once it listens. */
async function startHub(db: HubDb, home: string): Promise<HubProcess> {
  const env: NodeJS.ProcessEnv = {...process.env, HOME: home, SVC_SERVER_DATABASE_DRIVER: db.driver, SVC_SERVER_DATABASE_URL: db.url}
  for (const k of Object.keys(env)) if (k.startsWith('SVC_') && !k.startsWith('SVC_SERVER_DATABASE_')) delete env[k]
  const child = spawn(process.execPath, ['--import', 'tsx', HUB], {env, stdio: ['ignore', 'pipe', 'pipe']})
  const exited = new Promise<void>((r) => child.on('exit', () => r()))
  let err = ''
  child.stderr!.on('data', (d) => (err += d))
  const line = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d) => {
      out += d
      const m = /^listening (\S+) (\S+)$/m.exec(out)
      if (m) resolve(m[0])
    })
    child.on('exit', (code) => reject(new Error(`the Hub exited (${code}) before listening: ${err}`)))
  })
  const [, url, devToken] = line.split(' ')
  return {child, url, devToken, exited}
}

/**
 * POSTs a status report and SIGKILLs the Hub the moment the answer's status line arrives,
 * before anything else can run in this process: resolves the status it answered.
 */
function reportThenKill(hub: HubProcess, agentId: string, token: string, body: unknown): Promise<number> {
  const payload = Buffer.from(JSON.stringify(body))
  return new Promise((resolve, reject) => {
    const req = http.request(`${hub.url}/api/v1/agents/${agentId}/status`, {method: 'POST', agent: false, headers: {'content-type': 'application/json', 'content-length': payload.length, authorization: `Bearer ${token}`}}, (res) => {
      hub.child.kill('SIGKILL')
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/**
 * A status report answered 2xx is stored (CONTRACT "Isolation"): a real Hub process is killed
 * with SIGKILL as soon as it answers a report, then started again on the same database; the
 * report is there, round after round. Reports were batched in memory and written up to 200 ms
 * after their answer, so without the fix nearly every round lost its report.
 */
describeEachDialect('status reports survive kill -9 right after their 2xx', (dialect) => {
  let db: HubDb
  let home: string
  let hub: HubProcess | null = null
  let fake: FakeBroker | null = null
  beforeEach(async () => {
    db = await createHubDb(dialect)
    home = mkdtempSync(join(tmpdir(), 'svc-durable-'))
  })
  afterEach(async () => {
    await fake?.close().catch(() => {})
    if (hub && hub.child.exitCode === null && hub.child.signalCode === null) {
      hub.child.kill('SIGKILL')
      await hub.exited
    }
    await db.drop()
    rmSync(home, {recursive: true, force: true})
  })

  // Each round starts a Hub process (a few seconds on a loaded machine): a liveness bound, not a target.
  it(`${ROUNDS} rounds: report, kill -9 on its 200, restart, the report is stored`, {timeout: 240_000}, async () => {
    hub = await startHub(db, home)
    const api = async (method: string, path: string, body?: unknown, token: string | null = hub!.devToken) => {
      const r = await requestJson<any>(method, `${hub!.url}${path}`, {body, ...(token && {token})})
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`)
      return r.body
    }
    // A hand-driven broker runs the agent, so the agent's token is a real one the Hub minted.
    const {joinToken} = await api('POST', '/api/v1/brokers/register', {name: 'fake'})
    const {brokerId, secret} = await api('POST', '/api/v1/brokers/join', {joinToken}, null)
    fake = new FakeBroker(hub.url, brokerId, secret)
    fake.answer = (method) => (method === 'agent.start' ? {runtime: 'local', ref: 'svc-durable'} : {})
    await fake.connect()
    await waitFor(async () => (await api('GET', '/api/v1/brokers')).brokers.some((b: {id: string; connected: boolean}) => b.id === brokerId && b.connected), 10_000, 'the broker connected')
    const {agent} = await api('POST', '/api/v1/agents', {projectId: 'default', name: 'durable', harnessConfig: 'shell', brokerId})
    expect(agent.phase).toBe('running')
    const token = (fake.requests('agent.start')[0].params as {env: Record<string, string>}).env.SVC_AUTH_TOKEN
    await fake.close()
    fake = null

    for (let round = 1; round <= ROUNDS; round++) {
      const sent = {activity: round % 2 ? 'thinking' : 'executing', detail: `round ${round}`}
      expect(await reportThenKill(hub, agent.id, token, sent), `round ${round}`).toBe(200)
      await hub.exited
      hub = await startHub(db, home)
      const got = (await api('GET', `/api/v1/agents/${agent.id}`)).agent
      expect({phase: got.phase, activity: got.activity, detail: got.detail}, `round ${round}`).toEqual({phase: 'running', ...sent})
    }
  })
})
