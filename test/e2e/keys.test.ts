import {createServer, type IncomingMessage, type Server} from 'node:http'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, freePort, runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'

/**
 * The done-when scenarios of the messages and keys issue with the real CLI against a real
 * `svc server start` whose co-located broker runs agents in tmux (its own TMUX_TMPDIR); the
 * `--raw` refusal before any request; an older Hub without the keys route.
 */
describe('svc keys and svc message against a workstation Hub', {timeout: 180_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-keys-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-keys-tmux-'))
  let env: NodeJS.ProcessEnv
  let server: RunningServer
  let demo: {id: string}
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const svc = (args: string[], extra: Record<string, string> = {}) => runCli(args, {env: {...env, ...extra}, timeoutMs: 60_000})
  const pane = () => tmux('capture-pane', '-p', '-t', `=svc-${demo.id}:`).stdout
  const command = () => tmux('list-panes', '-t', `=svc-${demo.id}:`, '-F', '#{pane_current_command}').stdout.trim()

  beforeAll(async () => {
    ;({server, env} = await startLocalRuntimeServer(home, tmuxDir))
    const r = await svc(['agent', 'create', 'demo', '--harness', 'shell', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    demo = r.json.agent
    await waitFor(() => pane().trim().length > 0, 10_000, 'a shell prompt')
  })
  afterAll(async () => {
    await server?.stop()
    tmux('kill-server')
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it("svc keys demo 'echo hi' then svc keys demo Enter shows hi in the pane", async () => {
    const typed = await svc(['keys', 'demo', 'echo hi'])
    expect(typed.code, typed.stderr).toBe(0)
    expect(typed.stdout).toMatch(/^Sent \(operation op_[0-9a-f]+\)\.\n$/)
    // Typed, not yet run.
    await waitFor(() => /echo hi$/m.test(pane()), 10_000, 'typed')
    expect(pane()).not.toMatch(/^hi$/m)
    const enter = await svc(['keys', 'demo', 'Enter', '--json'])
    expect(enter.code, enter.stderr).toBe(0)
    expect(enter.json).toEqual({operationId: expect.stringMatching(/^op_/), delivered: true})
    await waitFor(() => /^hi$/m.test(pane()), 10_000, 'hi in the pane')
  })

  it('svc keys demo C-c interrupts a running sleep 100', async () => {
    expect((await svc(['keys', 'demo', 'sleep 100'])).code).toBe(0)
    expect((await svc(['keys', 'demo', 'Enter'])).code).toBe(0)
    await waitFor(() => command() === 'sleep', 10_000, 'sleep running')
    const started = Date.now()
    const r = await svc(['keys', 'demo', 'C-c'])
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => command() !== 'sleep', 10_000, 'sleep interrupted')
    expect(Date.now() - started).toBeLessThan(30_000)
    expect(pane()).toContain('^C')
  })

  it('--literal types a key name as text; the project-scoped form works with --project', async () => {
    expect((await svc(['keys', 'demo', 'echo word-', '--project', 'default'])).code).toBe(0)
    expect((await svc(['keys', 'demo', 'Enter', '--literal'])).code).toBe(0)
    expect((await svc(['keys', 'demo', 'Enter'])).code).toBe(0)
    await waitFor(() => /^word-Enter$/m.test(pane()), 10_000, 'the literal word')
  })

  it('svc message delivers to the pane (--json {messageId}); --broadcast reaches the project', async () => {
    const r = await svc(['message', 'demo', 'echo via-svc-message', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toEqual({messageId: expect.any(String)})
    await waitFor(() => /^via-svc-message$/m.test(pane()), 10_000, 'the message ran')
    const human = await svc(['message', 'demo', 'echo via-plain', '--plain'])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^Sent message \S+\.\n$/)
    await waitFor(() => /^via-plain$/m.test(pane()), 10_000, 'the plain message ran')
    const b = await svc(['message', '--broadcast', 'default', 'echo via-broadcast'])
    expect(b.code, b.stderr).toBe(0)
    expect(b.stdout).toMatch(/^Broadcast \S+ to 1 agent\.\n$/)
    await waitFor(() => /^via-broadcast$/m.test(pane()), 10_000, 'the broadcast ran')
  })

  it('a stopped agent: svc keys exits 1 with agent_not_running', async () => {
    expect((await svc(['agent', 'stop', 'demo'])).code).toBe(0)
    const r = await svc(['keys', 'demo', 'Enter', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.error.code).toBe('agent_not_running')
    const human = await svc(['keys', 'demo', 'Enter'])
    expect(human.code).toBe(1)
    expect(human.stderr).toContain('(agent_not_running)')
  })
})

describe('svc message --raw is refused before any request', {timeout: 120_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-raw-'))
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    // Nothing listens there: a request would be exit 3 (hub unreachable).
    env = cliEnv(home, {SVC_HUB_ENDPOINT: `http://127.0.0.1:${await freePort()}`, SVC_DEV_TOKEN: `svc_dev_${'0'.repeat(64)}`})
  })
  afterAll(() => rmSync(home, {recursive: true, force: true}))

  it('control: without --raw the same command tries the Hub and exits 3', async () => {
    const r = await runCli(['message', 'demo', 'hi', '--json'], {env})
    expect(r.code, r.stderr).toBe(3)
  })

  const forms = [
    ['message', 'demo', 'hi', '--raw'],
    ['message', 'demo', 'hi', '--raw=true'],
    ['message', 'demo', 'hi', '--raw', 'false'],
    ['message', 'demo', 'hi', '--raw=false'],
    ['message', 'demo', 'hi', '--RAW'],
    ['message', 'demo', 'hi', '--Raw=1'],
    ['message', '--raw', 'demo', 'hi'],
    ['message', 'demo', 'hi', '--raw', '--plain'],
    ['message', 'demo', 'hi', '--raw', '--interrupt'],
    ['message', 'demo', 'hi', '--project', 'default', '--raw'],
    ['message', '--broadcast', 'default', 'hi', '--raw'],
    ['message', '--broadcast', 'default', 'hi', '--raw=yes'],
  ]
  it.each(forms.map((f) => [f.join(' '), f]))('svc %s: exit 2', async (_name, args) => {
    const r = await runCli(args as string[], {env})
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/--raw was removed/)
    const j = await runCli([...(args as string[]), '--json'], {env})
    expect(j.code).toBe(2)
    expect(j.json.error).toMatchObject({code: 'usage_error', message: expect.stringContaining('svc keys')})
  })
})

describe('svc keys against a Hub without the keys operation', {timeout: 120_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-oldhub-'))
  const seen: Array<{method: string; url: string}> = []
  let answer: {status: number; body: unknown} = {status: 404, body: {}}
  let server: Server
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      seen.push({method: req.method!, url: req.url!})
      req.resume()
      req.on('end', () => {
        res.writeHead(answer.status, {'content-type': 'application/json', 'x-request-id': 'x'})
        res.end(JSON.stringify(answer.body))
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const port = (server.address() as {port: number}).port
    env = cliEnv(home, {SVC_HUB_ENDPOINT: `http://127.0.0.1:${port}`, SVC_DEV_TOKEN: `svc_dev_${'0'.repeat(64)}`})
  })
  afterAll(async () => {
    await new Promise((r) => server.close(r))
    rmSync(home, {recursive: true, force: true})
  })

  it('a "no route" 404 is hub_unsupported, exit 3, with no fallback to the message route', async () => {
    answer = {status: 404, body: {error: {code: 'not_found', message: 'no route POST /api/v1/projects/default/agents/demo/keys', details: {reason: 'no_route'}, requestId: 'x'}}}
    seen.length = 0
    const r = await runCli(['keys', 'demo', 'Enter', '--json'], {env})
    expect(r.code, r.stderr).toBe(3)
    expect(r.json.error.code).toBe('hub_unsupported')
    expect(seen.filter((s) => s.method === 'POST').map((s) => s.url)).toEqual([expect.stringMatching(/\/keys$/)])
    const human = await runCli(['keys', 'demo', 'echo hi'], {env})
    expect(human.code).toBe(3)
    expect(human.stderr).toContain('hub_unsupported')
    expect(seen.some((s) => s.url.includes('/message'))).toBe(false)
  })

  it('a Hub from before the keys operation (its "no route" 404 has no details) is hub_unsupported too', async () => {
    answer = {status: 404, body: {error: {code: 'not_found', message: 'no route POST /api/v1/projects/default/agents/demo/keys', requestId: 'x'}}}
    const r = await runCli(['keys', 'demo', 'Enter', '--json'], {env})
    expect(r.code, r.stderr).toBe(3)
    expect(r.json.error.code).toBe('hub_unsupported')
  })

  it('a 404 for a missing agent stays not_found (exit 1)', async () => {
    answer = {status: 404, body: {error: {code: 'not_found', message: 'agent not found', requestId: 'x'}}}
    const r = await runCli(['keys', 'nobody', 'Enter', '--json'], {env})
    expect(r.code).toBe(1)
    expect(r.json.error.code).toBe('not_found')
  })
})
