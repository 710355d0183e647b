import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import WebSocket from 'ws'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {baseImageTag} from '../../src/broker/images/base-recipe.js'
import {buildBaseImage} from '../../src/broker/images/build-base.js'
import {runCommand} from '../../src/broker/runtimes/run-command.js'
import {findExecutable} from '../../src/broker/sandbox/host.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * Agents on real podman: a Hub whose co-located broker runs podman (named by the test, not
 * detected), the agent base image built by `svc image build`'s code (once: the engine keeps it,
 * and the root file system tar is cached under ~/.cache/svc/images keyed by the recipe hash).
 * Skipped with a message where podman is not installed, except in CI, where that fails.
 */
const podman = findExecutable('podman', `${process.env.PATH}:/usr/sbin:/sbin`)
const inCi = process.env.CI === 'true'
if (!podman && !inCi) console.warn('podman-live.test.ts: SKIPPED: podman is not installed here (Debian: apt-get install podman runc debootstrap)')

describe('podman is installed (required in CI)', () => {
  it.runIf(inCi)('podman is on PATH', () => {
    expect(podman, 'CI must install podman, runc and debootstrap (.ci/run)').toBeTruthy()
  })
})

describe.skipIf(!podman)('agents on real podman (co-located broker, base image)', () => {
  let hub: LiveHub
  let agent: {id: string; name: string; workspace?: {path: string} | null}
  const name = () => `svc-${agent.id}`

  beforeAll(async () => {
    const built = await buildBaseImage({engine: 'podman', progress: (l) => console.error(`[podman-live] ${l}`)})
    expect(built.image).toBe(baseImageTag())
    hub = await startLiveHub('sqlite', {env: {SVC_SERVER_BROKER_RUNTIME: 'podman', CONTAINER_HOST: undefined, DOCKER_HOST: undefined} as unknown as Record<string, string>})
  }, 900_000)

  afterAll(async () => {
    if (agent) await runCommand('podman', ['rm', '-f', name()]).catch(() => {})
    await hub?.dispose()
  })

  const logs = async () => String((await hub.request('GET', `/api/v1/agents/${agent.id}/logs`)).body)
  const keys = (text: string) => hub.request('POST', `/api/v1/agents/${agent.id}/keys`, {body: {keys: text}})
  // `podman exec` takes seconds on a loaded machine, and a keys request may time out (504): the
  // commands sent through this are idempotent, so they are sent again until one is delivered.
  const keysDelivered = (text: string) => waitFor(async () => (await keys(text)).status === 200, 120_000, `keys ${JSON.stringify(text)} delivered`)
  const get = async () => (await hub.request('GET', `/api/v1/agents/${agent.id}`)).body.agent

  it('dispatch: a shell agent with no image runs in a container of the base image, recorded on the agent', async () => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'boxed', projectId: 'default', harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    agent = r.body.agent
    expect(r.body.agent, r.body.agent.error).toMatchObject({phase: 'running', runtime: 'podman', image: baseImageTag(), sandbox: 'container'})
    const running = await runCommand('podman', ['inspect', '--format', '{{.State.Running}}', name()])
    expect(running.stdout.toString().trim()).toBe('true')
    const broker = (await hub.request('GET', `/api/v1/brokers/${hub.brokerId}`)).body.broker
    expect(broker.runtimes[0]).toBe('podman')
  }, 300_000)

  it('keys run in the container and show in the logs; the agent reports its status from inside with svc', async () => {
    await keysDelivered('echo "in-$(cat /etc/debian_version | cut -c1-2)-box"\r')
    await waitFor(async () => /^in-12-box$/m.test(await logs()), 60_000, 'the command ran in the container (Debian 12)')
    await keysDelivered('svc status thinking --detail from-the-container\r')
    await waitFor(async () => {
      const a = await get()
      return a.activity === 'thinking' && a.detail === 'from-the-container'
    }, 60_000, 'the status report from inside')
  }, 300_000)

  it('the worktree is mounted at its host path: a file written inside shows on the host', async () => {
    const dir = agent.workspace?.path ?? join(hub.home, '.svc', 'broker', 'workspaces', agent.id)
    await keysDelivered(`echo made-in-the-container > ${dir}/inside.txt\r`)
    // The shell creates the file before echo writes into it: wait for the whole line.
    const inside = await waitFor(() => (existsSync(join(dir, 'inside.txt')) ? /\n$/.exec(readFileSync(join(dir, 'inside.txt'), 'utf8'))?.input : undefined), 60_000, 'the file on the host')
    expect(inside).toBe('made-in-the-container\n')
  }, 300_000)

  it('messages are pasted into the terminal', async () => {
    const m = await hub.request('POST', `/api/v1/agents/${agent.id}/message`, {body: {message: 'echo "via-""message"'}})
    expect(m.status).toBe(202)
    await waitFor(async () => /^via-message$/m.test(await logs()), 30_000, 'the message ran')
  }, 300_000)

  it('attach: the screen, then typed input and its output', async () => {
    const url = new URL(`/api/v1/agents/${agent.id}/attach?cols=100&rows=30`, hub.url)
    url.protocol = 'ws:'
    const ws = new WebSocket(url, {headers: {authorization: `Bearer ${hub.devToken}`}})
    let text = ''
    ws.on('message', (d, binary) => binary && (text += d.toString()))
    await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)))
    ws.send(Buffer.from('echo "attached-""here"\r'), {binary: true})
    await waitFor(() => text.includes('attached-here'), 30_000, 'attach output')
    ws.close()
  }, 300_000)

  it('delete removes the container', async () => {
    expect((await hub.request('DELETE', `/api/v1/agents/${agent.id}`)).status).toBe(200)
    expect((await runCommand('podman', ['container', 'exists', name()])).code).not.toBe(0)
  }, 300_000)
})
