import {chmod, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import pino from 'pino'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Broker} from './broker.js'
import {PodmanRuntime} from './runtimes/podman.js'
import {runCommand} from './runtimes/run-command.js'
import {createRuntime, runtimeNamed, type RuntimeFactoryOptions} from './runtimes/select.js'

// Real tmux on a private server (TMUX_TMPDIR in this file's directory); podman is a stand-in CLI
// with no engine behind it, so nothing here depends on the engines this machine has.
let dir: string
let env: NodeJS.ProcessEnv
let opts: RuntimeFactoryOptions
const logger = pino({level: 'silent'})

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-broker-rt-'))
  env = {...process.env, TMUX_TMPDIR: dir}
  delete env.TMUX
  await writeFile(join(dir, 'podman'), '#!/bin/sh\necho "Cannot connect to Podman" >&2\nexit 125\n')
  await chmod(join(dir, 'podman'), 0o755)
  // `sandbox: none` keeps this test about runtime choice; the sandbox has its own tests.
  opts = {stateDir: join(dir, 'logs'), env, bins: {podman: join(dir, 'podman')}}
})

afterAll(async () => {
  await runCommand('tmux', ['-L', 'svc', 'kill-server'], {env})
  await rm(dir, {recursive: true, force: true})
})

const local = {type: 'local', sandbox: 'none'}
const broker = (over: Partial<ConstructorParameters<typeof Broker>[0]> = {}) =>
  new Broker({hubUrl: 'http://127.0.0.1:9', brokerId: 'b1', secret: 's', stateDir: join(dir, 'broker'), logger, runtime: createRuntime('local', local, opts), runtimeName: 'local', runtimeSettings: local, createRuntime: (n, s) => createRuntime(n, s, opts), resolveRuntime: (n) => runtimeNamed({runtimes: {local}}, n, opts), ...over})
const start = (b: Broker, agentId: string, extra: Record<string, unknown> = {}) =>
  b.request('agent.start', {agentId, name: agentId, projectId: 'p1', harnessConfig: 'shell', env: {}, ...extra}) as Promise<{runtime: string; ref: string; sandbox: string | null; image: string | null}>
const pane = async (ref: string) => (await runCommand('tmux', ['-L', 'svc', 'capture-pane', '-p', '-t', `=${ref}:`], {env})).stdout.toString('utf8')

describe('a runtime fixed per agent', () => {
  it('an agent started on local is still handled by local after the default becomes podman (a restart with an engine installed)', async () => {
    const first = broker()
    const started = await start(first, 'fixed-1')
    expect(started).toMatchObject({runtime: 'local', ref: 'svc-fixed-1', sandbox: 'none', image: null})

    // The same state dir, as after a restart; the default runtime is podman now.
    const podman = new PodmanRuntime({bin: join(dir, 'podman'), env})
    const second = broker({runtime: podman, runtimeName: 'podman', runtimeSettings: {type: 'podman'}})
    expect(second.runtimeTypes()).toEqual(['podman', 'local'])
    await expect(second.request('agent.keys', {agentId: 'fixed-1', input: {literal: 'echo still-local'}})).resolves.toEqual({delivered: true})
    await second.request('agent.keys', {agentId: 'fixed-1', input: {key: 'Enter'}})
    await expect.poll(() => pane('svc-fixed-1'), {timeout: 10_000}).toMatch(/^still-local$/m)

    // The Hub restarts an agent on the runtime it was first dispatched on, not on the default.
    await second.request('agent.stop', {agentId: 'fixed-1'})
    expect(await start(second, 'fixed-1', {runtime: 'local'})).toMatchObject({runtime: 'local', ref: 'svc-fixed-1'})
    await second.request('agent.stop', {agentId: 'fixed-1'})

    // A new agent goes to the default, which here refuses clearly (no engine, no image), before any container exists.
    await expect(start(second, 'fixed-2')).rejects.toThrow(/podman/)
  })

  it('without a way to build the recorded runtime, a request fails naming it instead of reaching another runtime', async () => {
    const first = broker()
    await start(first, 'fixed-3')
    const podman = new PodmanRuntime({bin: join(dir, 'podman'), env})
    const bare = broker({runtime: podman, runtimeName: 'podman', runtimeSettings: {type: 'podman'}, createRuntime: undefined, resolveRuntime: undefined})
    await expect(bare.request('agent.keys', {agentId: 'fixed-3', input: {key: 'Enter'}})).rejects.toThrow('runtime "local" (local) is not available on this broker')
    await expect(start(bare, 'fixed-4', {runtime: 'kubernetes'})).rejects.toThrow(/this agent runs on runtime "kubernetes", which this broker cannot use now/)
    await first.request('agent.stop', {agentId: 'fixed-3'})
  })
})
