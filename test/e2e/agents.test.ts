import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, freePort, runCli, startLocalRuntimeServer, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {agentProcessEnv, tmuxAt, waitFor} from '../helpers/live-hub.js'

/** IDs (whole, and the short ones of `agent list`) and times out of human output, so it can be snapshot. */
const normalise = (text: string) =>
  text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\b[0-9a-f]{8}(-[0-9a-f]{1,4})?(?= |$)/gm, '<short>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>')

/**
 * The done-when scenarios of the agents issue, with the real CLI against a real `svc server
 * start` whose co-located broker runs agents in tmux (its own TMUX_TMPDIR), a second broker
 * started with `svc broker start`, and a Hub restart on the same HOME and port.
 */
// Generous timeouts: each CLI call is a fresh Node process, slow on a loaded machine.
describe('svc agent, broker and status against a workstation Hub', {timeout: 180_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-agents-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-tmux-'))
  const brokerState = mkdtempSync(join(tmpdir(), 'svc-e2e-broker-'))
  let serverEnv: NodeJS.ProcessEnv
  let env: NodeJS.ProcessEnv
  let server: RunningServer
  let broker: ChildProcess | null = null
  let brokerErr = ''
  let colocatedId: string
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const svc = (args: string[], extra: Record<string, string> = {}, input?: string) => runCli(args, {env: {...env, ...extra}, input, timeoutMs: 60_000})
  const pane = (id: string) => tmux('capture-pane', '-p', '-t', `=svc-${id}:`).stdout

  beforeAll(async () => {
    ;({server, serverEnv, env} = await startLocalRuntimeServer(home, tmuxDir))
  })
  afterAll(async () => {
    if (broker && broker.exitCode === null) {
      broker.kill('SIGTERM')
      await new Promise((r) => broker!.once('exit', r))
    }
    await server?.stop()
    tmux('kill-server')
    for (const d of [home, tmuxDir, brokerState]) rmSync(d, {recursive: true, force: true})
  })

  let demo: {id: string}

  it('svc agent create demo --harness shell reaches phase running on the local runtime', async () => {
    const r = await svc(['agent', 'create', 'demo', '--harness', 'shell', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    expect(r.json.agent).toMatchObject({name: 'demo', phase: 'running', runtime: 'local', harnessConfig: 'shell'})
    demo = r.json.agent
    colocatedId = r.json.agent.brokerId
    expect(tmux('has-session', '-t', `=svc-${demo.id}`).code).toBe(0)

    const human = await svc(['agent', 'create', 'second', '--harness', 'shell'])
    expect(human.code, human.stderr).toBe(0)
    expect(normalise(human.stdout)).toMatchSnapshot('agent create (human)')
  })

  it('svc agent attach demo carries typing to the agent terminal', async () => {
    const r = await svc(['agent', 'attach', 'demo'], {}, 'echo typed\r')
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => /^typed$/m.test(pane(demo.id)), 10_000, 'the pane shows the typed command ran')
    expect(r.stdout).toContain('typed')
  })

  it('svc status, run with the agent\'s own environment, changes its activity', async () => {
    // The agent's own environment, as its harness process has it (the local runtime hands it over
    // through a private file, so tmux show-environment does not hold the token).
    const own = agentProcessEnv(tmuxDir, demo.id)
    const agentEnv = {SVC_AUTH_TOKEN: own.SVC_AUTH_TOKEN, SVC_AGENT_ID: own.SVC_AGENT_ID, SVC_HUB_ENDPOINT: own.SVC_HUB_ENDPOINT}
    expect(agentEnv.SVC_AUTH_TOKEN).toMatch(/^svc_agt_/)
    expect(agentEnv.SVC_AGENT_ID).toBe(demo.id)
    const r = await svc(['status', 'thinking', '--detail', 'x', '--json'], agentEnv)
    expect(r.code, r.stderr + r.stdout).toBe(0)
    const got = await svc(['agent', 'get', 'demo', '--json'])
    expect(got.json.agent).toMatchObject({phase: 'running', activity: 'thinking', detail: 'x'})
    const bad = await svc(['status', 'napping', '--json'], agentEnv)
    expect(bad.code).toBe(2)
  })

  it('agent list and get print stable human output', async () => {
    const list = await svc(['agent', 'list'])
    expect(list.code, list.stderr).toBe(0)
    expect(normalise(list.stdout)).toMatchSnapshot('agent list (human)')
    const get = await svc(['agent', 'get', 'demo'])
    expect(get.code, get.stderr).toBe(0)
    expect(normalise(get.stdout)).toMatchSnapshot('agent get (human)')
    const missing = await svc(['agent', 'get', 'nobody', '--json'])
    expect(missing.code).toBe(1)
    expect(missing.json.error.code).toBe('not_found')
  })

  it('templates: upload a directory (hub-wide, then a new version), list them, create an agent from one; logs, stop and start', async () => {
    const dir = join(brokerState, 'tpl', 'reviewer')
    mkdirSync(join(dir, 'prompts'), {recursive: true})
    writeFileSync(join(dir, 'README.md'), '# reviewer\n')
    writeFileSync(join(dir, 'prompts', 'system.md'), 'Be kind.\n')
    const up = await svc(['template', 'upload', dir, '--json'])
    expect(up.code, up.stderr + up.stdout).toBe(0)
    expect(up.json).toMatchObject({created: true, template: {name: 'reviewer', projectId: null, currentVersion: 1}, version: {seq: 1}})
    expect(up.json.version.manifest.map((m: {path: string}) => m.path)).toEqual(['README.md', 'prompts/system.md'])
    writeFileSync(join(dir, 'README.md'), '# reviewer v2\n')
    const again = await svc(['template', 'upload', dir])
    expect(again.code, again.stderr).toBe(0)
    expect(normalise(again.stdout)).toBe('Updated template reviewer (<id>), version 2 with 2 files.\n')
    const list = await svc(['template', 'list'])
    expect(normalise(list.stdout)).toBe('NAME      VERSION  PROJECT  ID\nreviewer  2        (hub)    <id>\n')

    const made = await svc(['agent', 'create', 'templated', '--harness', 'shell', '--template', 'reviewer', '--task', 'echo task-typed', '--json'])
    expect(made.code, made.stderr + made.stdout).toBe(0)
    expect(made.json.agent).toMatchObject({phase: 'running', template: up.json.template.id, task: 'echo task-typed'})
    // The shell harness takes no task argument: the broker types it into the terminal.
    await waitFor(() => /^task-typed$/m.test(pane(made.json.agent.id)), 15_000, 'the task ran')
    const logs = await svc(['agent', 'logs', 'templated', '--json'])
    expect(logs.json.logs).toContain('task-typed')
    const stop = await svc(['agent', 'stop', 'templated', '--json'])
    expect(stop.json.agent.phase).toBe('stopped')
    expect(tmux('has-session', '-t', `=svc-${made.json.agent.id}`).code).not.toBe(0)
    expect((await svc(['agent', 'logs', 'templated'])).stdout).toContain('task-typed')
    const start = await svc(['agent', 'start', 'templated', '--json'])
    expect(start.json.agent.phase).toBe('running')
    expect((await svc(['agent', 'delete', 'templated'])).code).toBe(0)
  })

  it('a second broker started with svc broker start joins in two phases and receives dispatches through its tunnel', async () => {
    const port = await freePort()
    broker = spawn(process.execPath, [BIN, 'broker', 'start', '--hub', server.url, '--runtime', 'local', '--port', String(port), '--state-dir', brokerState, '--name', 'second-broker'], {env, stdio: ['ignore', 'pipe', 'pipe']})
    broker.stdout!.on('data', () => {})
    broker.stderr!.on('data', (d) => (brokerErr += d))
    await waitFor(() => /svc broker \S+ joined/.test(brokerErr), 60_000, 'the broker joined').catch((err) => {
      throw new Error(`${err.message}; broker stderr: ${brokerErr}`)
    })
    const brokerId = /svc broker (\S+) joined/.exec(brokerErr)![1]
    await waitFor(async () => (await svc(['broker', 'list', '--json'])).json?.brokers.find((b: {id: string}) => b.id === brokerId)?.connected, 60_000, 'the broker online')
    const listed = (await svc(['broker', 'list', '--json'])).json.brokers
    expect(listed.find((b: {id: string}) => b.id === brokerId)).toMatchObject({name: 'second-broker', status: 'online', colocated: false, runtimes: ['local']})
    expect(listed.find((b: {id: string}) => b.id === colocatedId)).toMatchObject({colocated: true, connected: true})
    const human = await svc(['broker', 'list'])
    expect(human.stdout).toMatch(/second-broker\s+online/)
    expect(human.stdout).toMatch(/co-located \(co-located\)\s+online/)
    const one = await svc(['broker', 'get', brokerId, '--json'])
    expect(one.json.broker).toMatchObject({id: brokerId, connected: true})

    const r = await svc(['agent', 'create', 'remote', '--harness', 'shell', '--broker', brokerId, '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    expect(r.json.agent).toMatchObject({name: 'remote', phase: 'running', brokerId})
    // The broker's own log says it started the agent: the Hub reached it through the tunnel.
    await waitFor(() => brokerErr.includes(r.json.agent.id), 5000, 'the broker logged the start')
    expect(tmux('has-session', '-t', `=svc-${r.json.agent.id}`).code).toBe(0)
  })

  it('after SIGTERM and a restart of the Hub on the same HOME and port, the co-located broker is the same and online, and existing agents keep working', async () => {
    expect((await svc(['agent', 'get', 'demo', '--json'])).json.agent).toMatchObject({activity: 'thinking', turns: 0})
    expect(await server.stop('SIGTERM')).toBe(0)
    // Agents outlive the Hub: their sessions belong to tmux.
    expect(tmux('has-session', '-t', `=svc-${demo.id}`).code).toBe(0)
    // The agent's turn ends while the Hub is away: its hook (the harness's Stop, in the agent's
    // own environment) cannot deliver, so the report is kept in the agent's HOME.
    const own = agentProcessEnv(tmuxDir, demo.id)
    const hookEnv = {SVC_AGENT_ID: own.SVC_AGENT_ID, SVC_HUB_ENDPOINT: own.SVC_HUB_ENDPOINT, SVC_AUTH_TOKEN_FILE: own.SVC_AUTH_TOKEN_FILE}
    const hook = await svc(['hook', 'claude', 'Stop'], hookEnv, JSON.stringify({hook_event_name: 'Stop', session_id: 's1'}))
    expect(hook.code, hook.stderr).toBe(0)
    expect(hook.stderr).toMatch(/status report to \S+ failed/)
    const kept = join(dirname(own.SVC_AUTH_TOKEN_FILE), 'status-pending.json')
    expect(JSON.parse(readFileSync(kept, 'utf8'))).toMatchObject({activity: 'idle', turns: 1})
    server = await startServerProcess([], serverEnv, 60_000, {port: server.port})
    // The broker delivers it once it is back: the agent is idle, its turn counted, nothing kept.
    await waitFor(async () => (await svc(['agent', 'get', 'demo', '--json'])).json.agent.activity === 'idle', 30_000, 'the kept idle report delivered by the broker')
    expect((await svc(['agent', 'get', 'demo', '--json'])).json.agent).toMatchObject({activity: 'idle', detail: '', turns: 1})
    expect(existsSync(kept)).toBe(false)

    const brokers = (await svc(['broker', 'list', '--json'])).json.brokers
    const colocated = brokers.filter((b: {colocated: boolean}) => b.colocated)
    expect(colocated).toHaveLength(1)
    expect(colocated[0]).toMatchObject({id: colocatedId, connected: true, status: 'online'})
    expect((await svc(['agent', 'get', 'demo', '--json'])).json.agent).toMatchObject({id: demo.id, phase: 'running'})

    const r = await svc(['agent', 'attach', 'demo'], {}, 'echo after-restart\r')
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => /^after-restart$/m.test(pane(demo.id)), 10_000, 'typing reached the agent after the restart')

    // The standalone broker reconnects by itself (backoff) with its stored identity.
    const remote = (await svc(['agent', 'get', 'remote', '--json'])).json.agent
    await waitFor(async () => (await svc(['broker', 'get', remote.brokerId, '--json'])).json?.broker.connected, 60_000, 'the second broker back online')
  })

  it('svc agent delete demo removes its tmux session', async () => {
    const r = await svc(['agent', 'delete', 'demo'])
    expect(r.code, r.stderr).toBe(0)
    expect(normalise(r.stdout)).toBe('Deleted agent demo (<id>).\n')
    expect(tmux('has-session', '-t', `=svc-${demo.id}`).code).not.toBe(0)
    const gone = await svc(['agent', 'get', 'demo', '--json'])
    expect(gone.code).toBe(1)
  })
})
