import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import type {EventFilter} from '../../src/domain/events/events-service.js'
import {BIN, cliEnv, runCli, type CliResult} from '../helpers/cli.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * Issue 30 item 6: approve-then-wait must not race. A real `shell` agent on the local runtime
 * reports its own state with `svc status` (its agent token), typed into it with `svc keys`, as a
 * person answers a prompt. Plain `svc agent wait --for idle` answers at once with the
 * `waiting_for_input` the agent had before the keys (the race); `--changed` waits for the
 * change that follows the call.
 */
describeEachDialect('svc agent wait --changed', (dialect) => {
  let hub: LiveHub
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-changed-'))
  let env: NodeJS.ProcessEnv
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 60_000})
  // The streams the Hub has opened, by filter: the test types the answer only once the wait listens.
  const subscribed: EventFilter[] = []
  const agentState = async (name: string) => (await hub.request('GET', `/api/v1/projects/default/agents/${name}`)).body.agent
  const type = async (name: string, text: string) => {
    const t = await svc('keys', name, text, '--literal')
    expect(t.code, t.stderr).toBe(0)
    expect((await svc('keys', name, 'Enter')).code).toBe(0)
  }

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    const subscribe = hub.services.events.subscribe.bind(hub.services.events)
    hub.services.events.subscribe = async (ctx, filter, send) => {
      const stop = await subscribe(ctx, filter, send)
      subscribed.push(filter)
      return stop
    }
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken})
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it('after keys, plain wait answers with the old waiting_for_input; --changed answers with the change that follows', {timeout: 180_000}, async () => {
    const created = await svc('agent', 'create', 'asker', '--harness', 'shell', '--json')
    expect(created.code, created.stdout + created.stderr).toBe(0)
    const id = created.json.agent.id as string
    // The agent asks (as a harness's hook would), through its own token.
    await type('asker', 'svc status waiting_for_input --detail "Proceed?"')
    await waitFor(async () => (await agentState('asker')).activity === 'waiting_for_input', 30_000, 'the agent to report waiting_for_input')

    // The control, the race of the issue: the state before the answer satisfies --for idle at once.
    const plain = await svc('agent', 'wait', 'asker', '--for', 'idle', '--json')
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.json.agent).toMatchObject({activity: 'waiting_for_input', detail: 'Proceed?'})

    // Typed but not yet entered: the agent reacts only to the Enter, after the wait listens.
    expect((await svc('keys', 'asker', 'svc status thinking --detail working && svc status idle --detail answered', '--literal')).code).toBe(0)
    const before = subscribed.length
    const child = spawn(process.execPath, [BIN, 'agent', 'wait', 'asker', '--for', 'idle', '--changed', '--timeout', '120s', '--json'], {env, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({code, stdout, stderr, json: stdout ? JSON.parse(stdout) : undefined})))
    await waitFor(() => subscribed.slice(before).some((f) => f.agentId === id) || child.exitCode !== null, 60_000, 'the wait to listen')
    // Still waiting: the old waiting_for_input did not count.
    expect(child.exitCode, stdout + stderr).toBeNull()
    expect((await svc('keys', 'asker', 'Enter')).code).toBe(0)
    const r = await done
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json.agent).toMatchObject({id, phase: 'running', activity: 'idle', detail: 'answered'})
  })

  it('--changed on an agent in the awaited state already waits for a new report, not the current one', {timeout: 120_000}, async () => {
    const now = await agentState('asker')
    expect(now.activity).toBe('idle')
    const before = subscribed.length
    const w = runCli(['agent', 'wait', 'asker', '--for', 'any', '--changed', '--timeout', '120s', '--json'], {env, timeoutMs: 150_000})
    await waitFor(() => subscribed.slice(before).some((f) => f.agentId === now.id), 60_000, 'the wait to listen')
    await type('asker', 'svc status waiting_for_input --detail "Again?"')
    const r = await w
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json.agent).toMatchObject({activity: 'waiting_for_input', detail: 'Again?'})
  })
})
