import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, expect, it} from 'vitest'
import {cliEnv, freePort, runCli} from '../helpers/cli.js'

const home = mkdtempSync(join(tmpdir(), 'svc-e2e-status-kept-'))
afterAll(() => rmSync(home, {recursive: true, force: true}))

/**
 * `svc status` inside an agent (CONTRACT "Hosted at scale": nothing dropped): with no replica
 * answering, the report is kept in the agent's HOME (exit 0, `kept: true`) and goes out first
 * with the next report, to the first URL of the list that answers.
 */
it('a report no replica takes is kept, then delivered with the next one to a replica that answers', async () => {
  const tokenFile = join(home, '.svc', 'agent-token')
  mkdirSync(join(home, '.svc'), {recursive: true})
  writeFileSync(tokenFile, 'svc_agent_x\n')
  const gone = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`]
  const agent = {SVC_AGENT_ID: 'agent-1', SVC_AUTH_TOKEN_FILE: tokenFile}
  const kept = await runCli(['status', 'waiting_for_input', '--detail', 'asks', '--json'], {env: cliEnv(home, {...agent, SVC_HUB_ENDPOINT: gone[0], SVC_HUB_ENDPOINTS: gone.join(',')}), timeoutMs: 60_000})
  expect(kept.code, kept.stderr).toBe(0)
  expect(kept.json).toEqual({ok: true, kept: true})
  expect(kept.stderr).toContain('kept')
  expect(existsSync(join(home, '.svc', 'status-pending.json'))).toBe(true)

  const bodies: unknown[] = []
  const server = createServer((req, res) => {
    let b = ''
    req.on('data', (c) => (b += c))
    req.on('end', () => {
      bodies.push({url: req.url, auth: req.headers.authorization, body: JSON.parse(b)})
      res.writeHead(200, {'content-type': 'application/json'}).end('{"ok":true}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  try {
    const live = `http://127.0.0.1:${(server.address() as {port: number}).port}`
    const sent = await runCli(['status', '--detail', 'later', '--json'], {env: cliEnv(home, {...agent, SVC_HUB_ENDPOINT: gone[0], SVC_HUB_ENDPOINTS: `${gone[0]},${live}`}), timeoutMs: 60_000})
    expect(sent.code, sent.stderr).toBe(0)
    expect(sent.json).toEqual({ok: true})
    expect(bodies).toEqual([{url: '/api/v1/agents/agent-1/status', auth: 'Bearer svc_agent_x', body: {activity: 'waiting_for_input', detail: 'later', heartbeat: true}}])
    expect(existsSync(join(home, '.svc', 'status-pending.json'))).toBe(false)
  } finally {
    server.close()
  }
  // Bounded by its two CLI calls (60 s each), not the default 30 s: on a loaded machine each CLI start takes seconds.
}, 150_000)

it('outside an agent (no token file) a report no Hub takes is an error, exit 3', async () => {
  const r = await runCli(['status', 'idle', '--json'], {env: cliEnv(home, {SVC_AGENT_ID: 'agent-1', SVC_AUTH_TOKEN: 'svc_agent_x', SVC_HUB_ENDPOINT: `http://127.0.0.1:${await freePort()}`}), timeoutMs: 60_000})
  expect(r.code).toBe(3)
  expect(r.json?.error?.code).toBe('hub_unreachable')
}, 90_000)
