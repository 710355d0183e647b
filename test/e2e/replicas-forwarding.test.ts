import {copyFileSync} from 'node:fs'
import {join} from 'node:path'
import pino from 'pino'
import WebSocket from 'ws'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {iso} from '../../src/domain/shared/clock.js'
import {createHub, listenHub, type Hub} from '../../src/main.js'
import {requestJson} from '../../src/client/http.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {pgAvailable} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/** An answer held open: `first` at once, `last` when /release is asked for. */
const HOLD_SERVER = `const http = require('node:http')
let release = () => {}
http.createServer((req, res) => {
  if (req.url === '/release') return release(), res.end('ok')
  res.writeHead(200, {'content-type': 'text/plain'})
  res.write('first\\n')
  release = () => res.end('last\\n')
}).listen(Number(process.argv[2]), '127.0.0.1')
`

/**
 * Any replica serves any agent (CONTRACT "Hosted at scale"): two Hub replicas on one PostgreSQL
 * database; replica A holds the only broker (its co-located one: real tmux, shell agents),
 * replica B holds none. Every agent operation made through B reaches the agent through A:
 * create (placed on A's broker), keys, messages, logs, logs follow and attach (WebSockets), diff,
 * merge, restart, stop and start; and previews of its ports (HTTP and WebSocket, streamed through
 * A's tunnel). From inside the agent, the internal forwarding route of either replica refuses a
 * call without the replicas' signature.
 */
describe.skipIf(!(await pgAvailable()))('replicas: every agent operation through the replica that does not hold its broker [postgres]', {timeout: 180_000}, () => {
  let a: LiveHub
  let b: Hub
  let bUrl: string
  let repos: TestRepos
  let agent: {id: string; brokerId: string; workspace: {path: string}}

  const viaB = async (method: string, path: string, body?: unknown) => {
    const r = await requestJson<any>(method, `${bUrl}${path}`, {token: a.devToken, ...(body !== undefined && {body})}).catch((err) => ({status: err.status ?? 0, body: err}))
    return r as {status: number; body: any}
  }
  const logsViaB = async () => {
    const res = await fetch(`${bUrl}/api/v1/agents/${agent.id}/logs`, {headers: {authorization: `Bearer ${a.devToken}`}})
    return {status: res.status, text: await res.text()}
  }
  /** A WebSocket to replica B collecting what it receives as text. */
  const socketViaB = async (path: string) => {
    const ws = new WebSocket(`${bUrl.replace('http', 'ws')}${path}`, {headers: {authorization: `Bearer ${a.devToken}`}})
    let text = ''
    ws.on('message', (d, binary) => {
      if (binary) text += d.toString()
    })
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('error', reject)
      ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
    })
    return {ws, text: () => text}
  }

  beforeAll(async () => {
    // Previews on (auto_expose_ports.enabled); B reads the same settings file (a's HOME).
    a = await startLiveHub('postgres', {files: {'.svc/settings.yaml': 'schema_version: "1"\nauto_expose_ports:\n  enabled: true\n'}})
    const bootstrap = resolveBootstrap({port: 0}, {...a.env})
    bootstrap.values['server.broker.enabled'] = false
    b = await createHub(bootstrap, {env: {...a.env}, logger: pino({level: process.env.SVC_TEST_LOG ?? 'silent'})})
    bUrl = await listenHub(b, bootstrap)
    repos = makeRepos()
    const project = (await a.request('GET', '/api/v1/projects/default')).body.project
    await a.store.projects.update(project.id, {localPath: repos.checkout}, iso(new Date()))
    // B learns through the database that A holds the broker.
    await waitFor(async () => (await viaB('GET', `/api/v1/brokers/${a.brokerId}`)).body.broker?.connected === true, 20_000, 'B sees A\'s broker connected')
  }, 120_000)
  afterAll(async () => {
    await b?.close()
    await a?.dispose()
    repos?.dispose()
  })

  it('create, keys, message, logs, follow, attach, diff, merge, restart, stop and start all work through B', async () => {
    const created = await viaB('POST', '/api/v1/agents', {name: 'far', projectId: 'default', harnessConfig: 'shell'})
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    agent = created.body.agent
    expect(agent.brokerId).toBe(a.brokerId)
    expect(created.body.agent.phase, JSON.stringify(created.body.agent.error)).toBe('running')
    const seen = (marker: string) => waitFor(async () => (await logsViaB()).text.includes(marker), 20_000, `${marker} in the logs read through B`)

    const follow = await socketViaB(`/api/v1/agents/${agent.id}/logs`)
    const keys = await viaB('POST', `/api/v1/agents/${agent.id}/keys`, {keys: 'echo keys-$((40+2))\r'})
    expect(keys.status, JSON.stringify(keys.body)).toBe(200)
    await seen('keys-42')
    await waitFor(() => follow.text().includes('keys-42'), 20_000, 'the followed logs through B carry the output')
    follow.ws.close()

    const msg = await viaB('POST', `/api/v1/agents/${agent.id}/message`, {message: 'echo message-$((50+3))'})
    expect(msg.status, JSON.stringify(msg.body)).toBe(202)
    await seen('message-53')
    await waitFor(async () => (await viaB('GET', `/api/v1/agents/${agent.id}/messages`)).body.messages?.[0]?.delivery === 'delivered', 20_000, 'the message delivered')

    const attach = await socketViaB(`/api/v1/agents/${agent.id}/attach?cols=100&rows=30`)
    attach.ws.send(Buffer.from('echo attach-$((60+4))\r'), {binary: true})
    await waitFor(() => attach.text().includes('attach-64'), 20_000, 'typing through an attach on B reaches the agent')
    attach.ws.close()

    write(agent.workspace.path, 'far.txt', 'made far away\n')
    sh(agent.workspace.path, 'add', 'far.txt')
    sh(agent.workspace.path, 'commit', '-qm', 'far work')
    const diff = await viaB('GET', `/api/v1/agents/${agent.id}/diff`)
    expect(diff.status, JSON.stringify(diff.body)).toBe(200)
    expect(JSON.stringify(diff.body)).toContain('far.txt')
    const merged = await viaB('POST', `/api/v1/agents/${agent.id}/merge`, {strategy: 'squash'})
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    expect(merged.body.files).toContain('far.txt')

    const restarted = await viaB('POST', `/api/v1/agents/${agent.id}/restart`, {})
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(200)
    expect(restarted.body.agent).toMatchObject({phase: 'running', brokerId: a.brokerId})
    const stopped = await viaB('POST', `/api/v1/agents/${agent.id}/stop`)
    expect(stopped.body.agent?.phase, JSON.stringify(stopped.body)).toBe('stopped')
    expect(a.tmux('has-session', '-t', `=svc-${agent.id}`).code).not.toBe(0)
    const started = await viaB('POST', `/api/v1/agents/${agent.id}/start`)
    expect(started.body.agent, JSON.stringify(started.body)).toMatchObject({phase: 'running', brokerId: a.brokerId})
    expect(a.tmux('has-session', '-t', `=svc-${agent.id}`).code).toBe(0)
  })

  it('from inside the agent, the internal forwarding route of either replica refuses an unsigned or forged call', async () => {
    const route = `/internal/v1/replicas/brokers/${a.brokerId}/request`
    const body = JSON.stringify({method: 'agent.keys', params: {agentId: agent.id, input: {literal: 'echo pwned\r'}}})
    // The agent's own token, and made-up replica headers: the holder answers 401 and types nothing;
    // replica B is outside the isolated agent's network (000), or would answer 401 the same.
    const attempt = (base: string, tag: string) =>
      `curl -s -o /dev/null -w '${tag}=%{http_code}\\n' -X POST -H "authorization: Bearer $SVC_AUTH_TOKEN" -H 'content-type: application/x-svc-forward' ` +
      `-H 'x-svc-replica: x' -H 'x-svc-timestamp: ${Math.floor(Date.now() / 1000)}' -H 'x-svc-nonce: n' -H 'x-svc-signature: ${'0'.repeat(64)}' --data '${body}' ${base}${route}\r`
    expect((await viaB('POST', `/api/v1/agents/${agent.id}/keys`, {keys: attempt(a.url, 'holder')})).status).toBe(200)
    expect((await viaB('POST', `/api/v1/agents/${agent.id}/keys`, {keys: attempt(bUrl, 'other')})).status).toBe(200)
    await waitFor(async () => /holder=401/.test((await logsViaB()).text) && /other=(401|000)/.test((await logsViaB()).text), 30_000, 'both internal routes answered 401 inside the agent').catch(async (err) => {
      throw new Error(`${err.message}\n${(await logsViaB()).text.slice(-3000)}`)
    })
    expect((await logsViaB()).text).not.toMatch(/^pwned$/m)
  })

  it('previews an agent\'s port through B: HTTP (a 10 MiB body streamed, a POST body) and a WebSocket echo, authorized like reading the agent; from inside it the holder\'s internal byte-stream route refuses a forged upgrade', async () => {
    const created = await viaB('POST', '/api/v1/agents', {name: 'web', projectId: 'default', harnessConfig: 'shell'})
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const web = created.body.agent
    expect(web.brokerId).toBe(a.brokerId)
    copyFileSync(join(__dirname, '../fixtures/ports/agent-server.cjs'), join(web.workspace.path, 'server.cjs'))
    write(web.workspace.path, 'hold.cjs', HOLD_SERVER)
    const servers = 'node server.cjs $PORT 127.0.0.1 web & node hold.cjs $((PORT+1)) &\r'
    await waitFor(async () => (await viaB('POST', `/api/v1/agents/${web.id}/keys`, {keys: servers})).status === 200, 20_000, 'the servers started through B')
    const [listed] = await waitFor(async () => {
      const r = await viaB('GET', `/api/v1/agents/${web.id}/ports`)
      return r.body.ports?.length === 2 ? (r.body.ports as {port: number; url: string}[]) : undefined
    }, 30_000, 'the agent\'s ports listed through B')
    expect(listed.url).toBe(`${bUrl}/agents/${web.id}/ports/${listed.port}/`)
    const auth = {authorization: `Bearer ${a.devToken}`}

    const page = await fetch(`${listed.url}hello?x=1`, {headers: auth})
    const text = await page.text()
    expect(page.status, text).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain('sandbox')
    expect(text).toContain('hello from web')
    expect(text).toContain('GET /hello?x=1')
    expect(text).toContain('auth=-')
    const posted = await (await fetch(`${listed.url}form`, {method: 'POST', headers: auth, body: 'a=1&b=2'})).text()
    expect(posted).toContain('a=1&b=2')
    const big = await fetch(`${listed.url}big`, {headers: auth})
    expect((await big.arrayBuffer()).byteLength).toBe(10 * 1024 * 1024)
    // Streamed, not buffered: the first line of an answer the agent's server holds open arrives
    // through B before the server is told (by a second request) to finish it.
    const held = await fetch(`${bUrl}/agents/${web.id}/ports/${listed.port + 1}/hold`, {headers: auth})
    const reader = held.body!.getReader()
    const first = await Promise.race([reader.read(), new Promise<never>((_r, reject) => setTimeout(() => reject(new Error('the first line did not come through B before the end')), 15_000))])
    expect(Buffer.from(first.value!).toString()).toBe('first\n')
    expect((await fetch(`${bUrl}/agents/${web.id}/ports/${listed.port + 1}/release`, {headers: auth})).status).toBe(200)
    let rest = ''
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString()
    expect(rest).toBe('last\n')

    const echoed = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`${listed.url.replace('http', 'ws')}ws`, {headers: auth})
      ws.once('open', () => ws.send('ping'))
      ws.once('message', (data) => {
        resolve(data.toString())
        ws.close()
      })
      ws.once('error', reject)
      ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade answered ${res.statusCode}`)))
    })
    expect(echoed).toBe('echo:web:ping')

    // Authorized on B as on A: no credential 401; a port the agent does not listen on 404 (A's
    // broker's refusal, carried back through A).
    expect((await fetch(`${listed.url}hello`)).status).toBe(401)
    expect((await fetch(`${bUrl}/agents/${web.id}/ports/${listed.port + 5}/hello`, {headers: auth})).status).toBe(404)

    // From inside the agent, the holder's internal byte-stream route refuses a forged upgrade.
    const op = Buffer.from(JSON.stringify({method: 'agent.port', params: {agentId: web.id, port: listed.port}})).toString('base64url')
    const forged =
      `curl -s -o /dev/null --max-time 5 -w 'duplex=%{http_code}\\n' -H 'connection: Upgrade' -H 'upgrade: websocket' -H 'sec-websocket-version: 13' -H 'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==' ` +
      `-H 'x-svc-replica: x' -H 'x-svc-timestamp: ${Math.floor(Date.now() / 1000)}' -H 'x-svc-nonce: n' -H 'x-svc-signature: ${'0'.repeat(64)}' '${a.url}/internal/v1/replicas/brokers/${a.brokerId}/duplex?op=${op}'\r`
    expect((await viaB('POST', `/api/v1/agents/${web.id}/keys`, {keys: forged})).status).toBe(200)
    const webLogs = async () => (await fetch(`${bUrl}/api/v1/agents/${web.id}/logs`, {headers: auth})).text()
    await waitFor(async () => /duplex=\d{3}/.test(await webLogs()), 30_000, 'the forged upgrade answered')
    expect((await webLogs()).match(/duplex=(\d{3})/)?.[1]).toBe('401')
  })
})
