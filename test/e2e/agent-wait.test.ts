import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {BIN, runCli, startLocalRuntimeServer, type CliResult, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'

/**
 * `svc agent wait` and `svc agent list|get --watch` as spawned processes against a real
 * `svc server start`: they follow GET /api/v1/events, and exit as the contract says.
 */
describe('svc agent wait and --watch', {timeout: 180_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-wait-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-tmux-'))
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  const svc = (args: string[]) => runCli(args, {env, timeoutMs: 60_000})
  /** Starts svc without waiting; `done` resolves with its result. */
  const start = (args: string[]) => {
    const child = spawn(process.execPath, [BIN, ...args], {env, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const done = new Promise<CliResult>((resolve) =>
      child.on('close', (code) => {
        let json: unknown
        try {
          json = JSON.parse(stdout)
        } catch {
          json = undefined
        }
        resolve({code, stdout, stderr, json})
      }),
    )
    return {child, done, out: () => stdout}
  }
  const report = async (id: string, body: Record<string, unknown>) => {
    const token = readFileSync(join(home, '.svc/dev-token'), 'utf8').trim()
    await requestJson('POST', `${server.url}/api/v1/agents/${id}/status`, {token, body})
  }
  const create = async (name: string) => {
    const r = await svc(['agent', 'create', name, '--harness', 'shell', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    return r.json.agent as {id: string}
  }

  beforeAll(async () => {
    ;({server, env} = await startLocalRuntimeServer(home, tmuxDir))
  })
  afterAll(async () => {
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('--for input blocks until the agent waits for input, then prints it and exits 0', async () => {
    const a = await create('waiter')
    const w = start(['agent', 'wait', 'waiter', '--for', 'input', '--json'])
    await report(a.id, {activity: 'thinking'})
    await report(a.id, {activity: 'executing', detail: 'Bash: ls'})
    await new Promise((r) => setTimeout(r, 500))
    expect(w.child.exitCode).toBeNull()
    await report(a.id, {activity: 'waiting_for_input', detail: 'Allow Bash: rm -rf /tmp/x?'})
    const r = await w.done
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.agent).toMatchObject({id: a.id, activity: 'waiting_for_input', detail: 'Allow Bash: rm -rf /tmp/x?'})
  })

  it('returns at once when the agent is already in the awaited state (input is also idle and any)', async () => {
    for (const f of ['input', 'idle', 'any']) {
      const r = await svc(['agent', 'wait', 'waiter', '--for', f, '--timeout', '30s', '--json'])
      expect(r.code, f + r.stderr).toBe(0)
      expect(r.json.agent.activity).toBe('waiting_for_input')
    }
    const human = await svc(['agent', 'wait', 'waiter'])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain('running/waiting_for_input')
  })

  it('a timeout is exit 1 with wait_timeout; a bad duration is a usage error (exit 2)', async () => {
    const r = await svc(['agent', 'wait', 'waiter', '--for', 'done', '--timeout', '1s', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.error.code).toBe('wait_timeout')
    expect(r.json.error.details.agent.name).toBe('waiter')
    const bad = await svc(['agent', 'wait', 'waiter', '--timeout', 'soon', '--json'])
    expect(bad.code).toBe(2)
    expect(bad.json.error.code).toBe('usage_error')
    const unknown = await svc(['agent', 'wait', 'nobody', '--json'])
    expect(unknown.code).toBe(1)
    expect(unknown.json.error.code).toBe('not_found')
  })

  it('--for done returns when the agent stops; an agent that fails is exit 1 with agent_failed', async () => {
    const a = await create('stopper')
    const w = start(['agent', 'wait', a.id, '--for', 'done', '--json'])
    await new Promise((r) => setTimeout(r, 500))
    expect((await svc(['agent', 'stop', 'stopper'])).code).toBe(0)
    const r = await w.done
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.agent.phase).toBe('stopped')

    const b = await create('failer')
    const f = start(['agent', 'wait', 'failer', '--for', 'input', '--json'])
    await new Promise((r) => setTimeout(r, 500))
    await report(b.id, {phase: 'error', detail: 'harness crashed'})
    const rf = await f.done
    expect(rf.code).toBe(1)
    expect(rf.json.error.code).toBe('agent_failed')
  })

  it('agent list --watch --json prints one JSON line per agent, then one per change; get --watch follows one agent', async () => {
    const a = await create('watched')
    const list = start(['agent', 'list', '--watch', '--json'])
    const get = start(['agent', 'get', 'watched', '--watch', '--json'])
    try {
      const lines = (p: {out: () => string}) => p.out().split('\n').filter(Boolean).map((l) => JSON.parse(l).agent)
      await waitFor(() => lines(list).some((x) => x.id === a.id) && lines(get).length >= 1, 20_000, 'initial lines')
      await report(a.id, {activity: 'executing', detail: 'Bash: npm test'})
      await waitFor(() => lines(list).some((x) => x.id === a.id && x.activity === 'executing'), 20_000, 'list change line')
      await waitFor(() => lines(get).some((x) => x.activity === 'executing' && x.detail === 'Bash: npm test'), 20_000, 'get change line')
      expect(lines(get).every((x) => x.id === a.id)).toBe(true)
      // A new agent appears in the list.
      const b = await create('newcomer')
      await waitFor(() => lines(list).some((x) => x.id === b.id), 20_000, 'new agent line')
    } finally {
      list.child.kill('SIGINT')
      get.child.kill('SIGINT')
    }
  })
})
