import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {request} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {BIN, cliEnv, freePort} from '../helpers/cli.js'

/** One HTTP request on loopback with node:http (fetch costs 100+ ms to start in Node 20). */
function call(method: string, url: string, token?: string, body?: unknown): Promise<{status: number; body: any}> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = request(url, {method, headers: {...(token && {authorization: `Bearer ${token}`}), ...(data && {'content-type': 'application/json'})}}, (res) => {
      let text = ''
      res.on('data', (c) => (text += c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null}))
    })
    req.on('error', reject)
    req.end(data)
  })
}

/**
 * A script that starts a workstation Hub and creates an agent as soon as `/healthz` answers must
 * not get 503 `broker_unavailable` while the co-located broker is still starting (it detects the
 * default runtime: slower where podman is installed). Nothing names the runtime here: the broker
 * probes the machine's engines as a user's Hub does.
 */
describe('no start-up race: a create right after /healthz is accepted', () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-race-'))
  let child: ReturnType<typeof spawn> | null = null
  // The agent is deleted while its Hub still runs: a Hub that stops leaves its agents running
  // (a podman agent's container outlived every run of this file before).
  let deleteAgent: (() => Promise<unknown>) | null = null
  afterAll(async () => {
    await deleteAgent?.()
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child!.on('exit', r))
      child.kill('SIGTERM')
      await gone
    }
    rmSync(home, {recursive: true, force: true})
  })

  it('polls /healthz, then creates at once: 201, on the co-located broker', async () => {
    const port = await freePort()
    const brokerPort = await freePort()
    const env = cliEnv(home, {SVC_SERVER_BROKER_PORT: String(brokerPort), TMUX_TMPDIR: home})
    child = spawn(process.execPath, [BIN, 'server', 'start', '--port', String(port)], {env, stdio: ['ignore', 'ignore', 'pipe']})
    let stderr = ''
    child.stderr!.on('data', (d) => (stderr += d))
    const url = `http://127.0.0.1:${port}`
    const deadline = Date.now() + 90_000
    for (;;) {
      expect(child.exitCode, stderr).toBeNull()
      const up = await call('GET', `${url}/healthz`).catch(() => null)
      if (up?.status === 200) break
      expect(Date.now() < deadline, `no /healthz: ${stderr}`).toBe(true)
      await new Promise((r) => setTimeout(r, 10))
    }
    // The dev token is written before the Hub listens.
    const tokenFile = join(home, '.svc', 'dev-token')
    expect(existsSync(tokenFile)).toBe(true)
    const token = readFileSync(tokenFile, 'utf8').trim()
    const created = await call('POST', `${url}/api/v1/agents`, token, {name: 'first', projectId: 'default', harnessConfig: 'shell'})
    if (created.status === 201) deleteAgent = () => call('DELETE', `${url}/api/v1/agents/${created.body.agent.id}`, token)
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.agent.brokerId).toBeTruthy()
  }, 120_000)
})
