import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {baseImageTag} from '../../src/broker/images/base-recipe.js'
import {buildBaseImage} from '../../src/broker/images/build-base.js'
import {runCommand} from '../../src/broker/runtimes/run-command.js'
import {findExecutable} from '../../src/broker/sandbox/host.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {startAnthropicServer, userText, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const KEY = 'sk-ant-podman-key-for-the-scripted-server-0123456789'
const podman = findExecutable('podman', `${process.env.PATH}:/usr/sbin:/sbin`)

/**
 * The sandbox issue's done-when: a Claude Code agent in a podman container of the base image svc
 * builds, against the scripted Anthropic server on the host's loopback (the container shares the
 * host network). The base image has no harness CLIs: the broker's own Claude Code (npm, here the
 * suite's devDependency) is mounted read-only and run from its host path, as svc itself is. Its
 * hooks report from inside; the file its tool writes shows in the worktree on the host.
 * Skipped with the podman-live test's message where podman is missing (CI installs it).
 */
describe.skipIf(!podman)('a Claude Code agent inside a podman container', {timeout: 300_000}, () => {
  let hub: LiveHub
  let model: AnthropicServer
  let agent: {id: string; workspace: {path: string; branch: string}}
  const checkout = mkdtempSync(join(tmpdir(), 'svc-podman-claude-'))
  const git = (...args: string[]) => execFileSync('git', ['-C', checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {encoding: 'utf8'})
  const get = async () => (await hub.request('GET', `/api/v1/agents/${agent.id}`)).body.agent
  const seen: string[] = []
  /** The harness's screen inside the container, for a wait that times out. */
  const pane = async () => (await runCommand('podman', ['exec', `svc-${agent.id}`, 'tmux', 'capture-pane', '-p', '-t', 'svc']).catch((e: Error) => ({stdout: e.message}))).stdout.toString()
  const until = async (pred: (a: any) => boolean, what: string) => {
    try {
      return await waitFor(async () => {
        const a = await get()
        const key = `${a.phase}/${a.activity}${a.detail ? ` (${a.detail})` : ''}`
        if (seen.at(-1) !== key) seen.push(key)
        return pred(a) ? a : null
      }, 180_000, what)
    } catch (err) {
      throw new Error(`${(err as Error).message} (seen: ${seen.join(' -> ')}; model requests: ${model.mainRequests().length})\n${await pane()}`)
    }
  }

  beforeAll(async () => {
    await buildBaseImage({engine: 'podman', progress: (l) => console.error(`[podman-claude] ${l}`)})
    model = await startAnthropicServer()
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const settings = `schema_version: "1"\nharness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: ${KEY}\n`
    // The broker finds Claude Code on its PATH (the suite's node_modules/.bin), as a user's broker would.
    hub = await startLiveHub('sqlite', {
      files: {'.svc/settings.yaml': settings},
      env: {PATH: `${BIN_DIR}:${process.env.PATH}`, SVC_SERVER_BROKER_RUNTIME: 'podman', CONTAINER_HOST: undefined, DOCKER_HOST: undefined} as unknown as Record<string, string>,
    })
  }, 900_000)
  afterAll(async () => {
    if (agent) await runCommand('podman', ['rm', '-f', `svc-${agent.id}`]).catch(() => {})
    await hub?.dispose()
    await model?.close()
    rmSync(checkout, {recursive: true, force: true})
  })

  it('runs in a container of the base image, reports thinking, executing and idle from inside, and its file shows on the host', async () => {
    const project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'boxed', localPath: checkout}})).body.project
    model.enqueue({tool: {name: 'Bash', input: {command: 'echo from-the-box > boxed.txt && sleep 5', description: 'write boxed.txt'}}}, {text: 'Wrote boxed.txt.'})
    const release = model.hold()
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'boxed', projectId: project.id, harnessConfig: 'claude', task: 'write boxed.txt'}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    agent = r.body.agent
    expect(r.body.agent, r.body.agent.error).toMatchObject({phase: 'running', runtime: 'podman', image: baseImageTag(), sandbox: 'container', workspace: {branch: 'svc/boxed'}})
    const running = await runCommand('podman', ['inspect', '--format', '{{.State.Running}}', `svc-${agent.id}`])
    expect(running.stdout.toString().trim()).toBe('true')

    await model.waitForRequest((q) => q.main && userText(q.body).includes('write boxed.txt'), 180_000, 'the task as the first model request, from the container')
    await until((a) => a.activity === 'thinking', 'thinking while the model holds its answer')
    release()
    // Claude Code reports the tool (PreToolUse), then asks before writing a file: allow it.
    const asking = await until((a) => a.activity === 'waiting_for_input', 'waiting_for_input at the permission prompt')
    expect(asking.detail).toContain('echo from-the-box > boxed.txt')
    // PreToolUse's `executing` may last less than one poll before the permission prompt: the
    // agent's event log has it either way (every change of activity is an event).
    const events = async () => (await hub.store.agentEvents.since(0, 10_000)).filter((e) => e.agentId === agent.id).map((e) => `${e.activity} (${e.detail})`)
    const logged = await waitFor(async () => {
      const all = await events()
      // Written at the next flush of the status writer (the GET above sees reports at once).
      return all.includes('executing (Bash: echo from-the-box > boxed.txt && sleep 5)') && all.some((e) => e.startsWith('waiting_for_input')) ? all : null
    }, 10_000, 'the executing event').catch(async (err) => {
      throw new Error(`${err.message}; events: ${(await events()).join(' -> ')}`)
    })
    expect(logged.indexOf('executing (Bash: echo from-the-box > boxed.txt && sleep 5)')).toBeLessThan(logged.findIndex((e) => e.startsWith('waiting_for_input')))
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${agent.id}/keys`, {body: {keys: '\r'}})).status === 200, 60_000, 'Enter delivered')
    const idle = await until((a) => a.activity === 'idle', 'idle after the turn')
    expect(idle.turns).toBe(1)
    expect(existsSync(join(agent.workspace.path, 'boxed.txt'))).toBe(true)
    expect(readFileSync(join(agent.workspace.path, 'boxed.txt'), 'utf8')).toBe('from-the-box\n')
    expect(existsSync(join(checkout, 'boxed.txt'))).toBe(false)
  })
})
