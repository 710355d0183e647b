import {execFileSync} from 'node:child_process'
import {createServer, request, type Server} from 'node:http'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startAnthropicServer, userText, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const KEY = 'sk-ant-e2e-key-for-the-scripted-server-0123456789'

/**
 * Issue 30 item 3, end to end with the real Claude Code CLI under a real `svc server start`: a
 * model endpoint that refuses connections, answers 500 or answers 401. Before, the agent showed
 * `thinking`, then `idle` with the detail `server_error` and no error. Now each agent shows the
 * failure Claude Code showed as its `detail` and `error` (idle, waiting for the next message), a
 * webhook channel (on loopback: `allow_private`) gets a `harness_error` event for each, and the
 * next turn that works clears the error. CLAUDE_CODE_MAX_RETRIES=1 keeps Claude Code's own
 * retries (10 by default, minutes of backoff) short.
 */
describe('harness failures you can see: Claude Code against a broken model endpoint', {timeout: 300_000}, () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-e2e-claude-err-'))
  const home = join(root, 'home')
  const tmuxDir = join(root, 'tmux')
  const checkout = join(root, 'checkout')
  let model: AnthropicServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let token: string
  let failing: Server
  /** While true the `flaky` endpoint answers 500; then it passes requests on to the scripted model. */
  let flakyDown = true
  const deliveries: any[] = []
  let hooks: Server
  const ids: Record<string, string> = {}
  const svc = (args: string[]) => runCli(args, {env, cwd: checkout, timeoutMs: 90_000})
  const git = (...args: string[]) => execFileSync('git', args, {cwd: checkout, encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com'}})
  const pane = (name: string) => tmuxAt(tmuxDir, ['capture-pane', '-p', '-t', `=svc-${ids[name]}:`]).stdout
  const get = async (name: string) => {
    const res = await fetch(`${server.url}/api/v1/agents/${ids[name]}`, {headers: {authorization: `Bearer ${token}`}})
    return (await res.json()).agent
  }
  const until = async (name: string, pred: (a: any) => boolean, what: string) => {
    let last: any
    try {
      return await waitFor(async () => ((last = await get(name)), pred(last) ? last : undefined), 150_000, what)
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlast seen: ${JSON.stringify({phase: last?.phase, activity: last?.activity, detail: last?.detail, error: last?.error})}\npane:\n${pane(name)}`)
    }
  }

  beforeAll(async () => {
    for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d, {recursive: true})
    model = await startAnthropicServer()
    const modelUrl = new URL(model.url)
    // 500 while `flakyDown`, 401 always on /unauthorized, else passed on to the scripted model.
    failing = createServer((req, res) => {
      if (req.url?.startsWith('/unauthorized/')) {
        req.resume()
        res.writeHead(401, {'content-type': 'application/json'}).end(JSON.stringify({type: 'error', error: {type: 'authentication_error', message: 'invalid x-api-key'}}))
        return
      }
      if (flakyDown) {
        req.resume()
        res.writeHead(500, {'content-type': 'application/json'}).end(JSON.stringify({type: 'error', error: {type: 'api_error', message: 'Internal server error'}}))
        return
      }
      const up = request({host: modelUrl.hostname, port: modelUrl.port, path: req.url, method: req.method, headers: req.headers}, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers)
        r.pipe(res)
      })
      up.on('error', () => res.destroy())
      req.pipe(up)
    })
    await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r))
    const failingUrl = `http://127.0.0.1:${(failing.address() as {port: number}).port}`
    hooks = createServer((req, res) => {
      let raw = ''
      req.on('data', (d) => (raw += d))
      req.on('end', () => {
        deliveries.push(JSON.parse(raw))
        res.end()
      })
    })
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r))
    const hooksUrl = `http://127.0.0.1:${(hooks.address() as {port: number}).port}/hook`
    const closed = await freePort() // nothing listens there: connections are refused
    const config = (url: string) => `    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${url}\n      ANTHROPIC_API_KEY: ${KEY}\n      CLAUDE_CODE_MAX_RETRIES: "1"\n`
    writeFileSync(
      join(home, '.svc', 'settings.yaml'),
      `schema_version: "1"\nserver:\n  notification_channels:\n    - type: webhook\n      url: ${hooksUrl}\n      allow_private: true\n      events: [harness_error]\n` +
        `harness_configs:\n  refused:\n${config(`http://127.0.0.1:${closed}`)}  flaky:\n${config(failingUrl)}  badkey:\n${config(`${failingUrl}/unauthorized`)}`,
    )
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const serverEnv = cliEnv(home, {
      PATH: `${BIN_DIR}:${process.env.PATH}`,
      TMUX_TMPDIR: tmuxDir,
      SVC_SERVER_BROKER_PORT: String(await freePort()),
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      CONTAINER_HOST: 'unix:///nonexistent/podman.sock',
    })
    server = await startServerProcess([], serverEnv, 60_000)
    env = {...serverEnv, SVC_HUB_ENDPOINT: server.url}
    token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const reg = await svc(['project', 'register', '--json'])
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
  })
  afterAll(async () => {
    const pids = tmuxAt(tmuxDir, ['list-panes', '-a', '-F', '#{pane_pid}']).stdout.split('\n').filter(Boolean)
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
    await model?.close()
    failing?.close()
    hooks?.close()
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
  })

  it('refused, 500 and 401: each agent shows the failure as detail and error, idle; a harness_error webhook for each', async () => {
    for (const name of ['refused', 'flaky', 'badkey']) {
      const r = await svc(['agent', 'create', name, '--harness', name, `say hello (${name})`, '--json'])
      expect(r.code, r.stderr + r.stdout).toBe(0)
      ids[name] = r.json.agent.id
    }
    const refused = await until('refused', (a) => !!a.error, 'the refused connection reported')
    expect(refused).toMatchObject({phase: 'running', activity: 'idle'})
    // (ConnectionRefused, or ECONNRESET where the sandbox's egress proxy stands between)
    expect(refused.error).toMatch(/Unable to connect to API/)
    expect(refused.detail).toBe(refused.error)
    const flaky = await until('flaky', (a) => !!a.error, 'the 500 reported')
    expect(flaky).toMatchObject({phase: 'running', activity: 'idle'})
    expect(flaky.error).toMatch(/500/)
    expect(flaky.detail).toBe(flaky.error)
    const badkey = await until('badkey', (a) => !!a.error, 'the 401 reported')
    expect(badkey).toMatchObject({phase: 'running', activity: 'idle'})
    expect(badkey.error).toMatch(/API key|401|authentication/i)

    // The CLI shows it too.
    const shown = await svc(['agent', 'get', 'refused'])
    expect(shown.stdout).toMatch(/Error: +API Error: Unable to connect to API/)

    await waitFor(() => deliveries.length >= 3, 60_000, 'three webhook deliveries').catch(async (err) => {
      const status = await fetch(`${server.url}/api/v1/admin/status`, {headers: {authorization: `Bearer ${token}`}})
      throw new Error(`${(err as Error).message}: ${JSON.stringify(deliveries)} ${await status.text()}`)
    })
    expect(deliveries.map((d) => d.event)).toEqual(['harness_error', 'harness_error', 'harness_error'])
    const byName = Object.fromEntries(deliveries.map((d) => [d.agent.name, d]))
    expect(byName.refused.agent).toMatchObject({id: ids.refused, phase: 'running', activity: 'idle', error: refused.error})
    expect(byName.flaky.agent).toMatchObject({id: ids.flaky, error: flaky.error})
    expect(byName.badkey.agent).toMatchObject({id: ids.badkey, error: badkey.error})
    expect(byName.refused.text).toContain('hit an error: API Error: Unable to connect to API')
  })

  it('the next turn that works clears the error (no new webhook)', async () => {
    flakyDown = false
    model.enqueue({text: 'Hello again.'})
    const sent = await svc(['message', 'flaky', 'try again please', '--json'])
    expect(sent.code, sent.stderr + sent.stdout).toBe(0)
    await model.waitForRequest((q) => q.main && userText(q.body).includes('try again please'), 90_000, 'the retried prompt')
    const ok = await until('flaky', (a) => a.activity === 'idle' && a.error === null, 'idle with the error cleared')
    expect(ok.detail).toBe('')
    expect(deliveries.filter((d) => d.agent.name === 'flaky')).toHaveLength(1)
  })
})
