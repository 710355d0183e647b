import {spawn, spawnSync} from 'node:child_process'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {codex} from '../../src/broker/harnesses/codex.js'
import {agentRepoPaths} from '../../src/broker/workspace/agent-repo.js'
import {createWorkspace} from '../../src/broker/workspace/repository.js'
import type {HookReport, LaunchContext} from '../../src/broker/harnesses/types.js'
import {BIN, runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {killTmuxServer, tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startResponsesServer, toolOutputs, userTexts, type ResponsesServer} from '../helpers/model-servers/openai-responses.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {cwd, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}
const shq = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`
/** What Codex shows when it stops at a dialog: sign-in, folder trust, an update. */
const DIALOG = /Sign in|trust the files|Trust this folder|Update available|Press enter to continue/i

/**
 * The real Codex CLI as the module lays it out (prepare, args, env) in tmux against the
 * scripted Responses API server, in an agent's own repository as the broker makes it. Its hooks run a recorder in place of
 * `svc hook codex <event>` (same argv shape, payload on stdin); each recorded event goes through
 * the module's onHook, so this checks the mapping against what the real CLI sends.
 */
describe('Codex CLI prepared by the codex module, against the scripted model server', {timeout: 180_000}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-codex-'))
  const tmuxDir = join(dir, 'tmux')
  const checkout = join(dir, 'checkout')
  let workdir: string
  const home = join(dir, 'home')
  const events = join(dir, 'events.jsonl')
  const recorder = join(dir, 'record-hook.mjs')
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const pane = () => tmux('capture-pane', '-p', '-t', '=codex:').stdout
  /**
   * Types a line and submits it as a person would, as the broker does (a pause before Enter):
   * Codex takes an Enter in the same burst as typed text for a newline in its composer.
   */
  const typeAndSubmit = async (text: string) => {
    tmux('send-keys', '-t', '=codex:', '-l', text)
    await new Promise((r) => setTimeout(r, 300))
    tmux('send-keys', '-t', '=codex:', 'Enter')
  }
  let server: ResponsesServer
  let ctx: LaunchContext

  /** Reports the recorded hooks map to, in order. */
  const reports = (): Array<HookReport & {event: string}> =>
    existsSync(events)
      ? readFileSync(events, 'utf8').split('\n').filter(Boolean).map((l) => {
          const {event, payload} = JSON.parse(l)
          return {event, ...(codex.onHook(event, payload) ?? {})}
        })
      : []
  const lastReport = () => reports().at(-1)

  const start = (c: LaunchContext) => {
    const env = {PATH: `${BIN_DIR}:/usr/bin:/bin`, HOME: c.home, TERM: 'xterm-256color', ...c.env, ...codex.env!(c)}
    const cmd = ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), codex.executable, ...codex.args(c)]
    const r = tmux('new-session', '-d', '-s', 'codex', '-x', '200', '-y', '50', '-c', c.workdir, cmd.map(shq).join(' '))
    expect(r.code, r.stderr).toBe(0)
  }

  beforeAll(async () => {
    mkdirSync(tmuxDir)
    mkdirSync(checkout)
    mkdirSync(home)
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git(checkout, 'add', '-A')
    git(checkout, 'commit', '-q', '-m', 'init')
    // The agent's own repository and work tree, as a broker makes them (objects borrowed from the checkout).
    workdir = (await createWorkspace({checkout, branch: 'svc/fix'}, agentRepoPaths(join(dir, 'state'), 'a-1')))!.path
    writeFileSync(
      recorder,
      `import {appendFileSync, readFileSync} from 'node:fs'\nconst payload = JSON.parse(readFileSync(0, 'utf8') || 'null')\nappendFileSync(${JSON.stringify(events)}, JSON.stringify({event: process.argv[2], payload}) + '\\n')\n`,
    )
    server = await startResponsesServer()
    ctx = {
      agentId: 'a-1',
      agentName: 'fix',
      home,
      workdir,
      task: 'write the marker file',
      // A model whose tools are plain functions; the server also answers code-mode tool sets.
      model: 'gpt-5.1-codex',
      thinkingLevel: 'low',
      resume: false,
      env: {OPENAI_API_KEY: 'sk-test-not-a-real-key', OPENAI_BASE_URL: server.baseUrl},
      authType: 'api-key',
      hookCommand: [process.execPath, recorder],
      userHome: dir,
    }
  })
  afterAll(async () => {
    tmux('kill-server')
    await server?.close()
    rmSync(dir, {recursive: true, force: true})
  })

  it('first run: no dialog, the task is the first prompt, thinking while the model works', async () => {
    server.hold()
    server.enqueue({shell: 'echo made-by-codex > marker.txt; sleep 2'}, {text: 'I wrote marker.txt'})
    await codex.prepare(ctx)
    start(ctx)
    const first = await server.waitForRequest((r) => userTexts(r.body).includes('write the marker file'), 60_000, 'request carrying the task')
    expect(first.body.stream).toBe(true)
    expect(first.headers.authorization).toBe('Bearer sk-test-not-a-real-key')
    expect(first.body.reasoning?.effort).toBe('low')
    await waitFor(() => lastReport()?.activity === 'thinking', 30_000, `thinking while the answer is held (reports: ${JSON.stringify(reports())})`)
    // The prompt UI is up and nothing asks the user anything (sign-in, trust, update).
    await waitFor(() => /gpt-5\.1-codex low/.test(pane()), 30_000, `the Codex prompt UI (pane:\n${pane()})`)
    expect(pane()).not.toMatch(DIALOG)
  })

  it('the shell tool runs in the work tree: executing with its command, then idle when the turn ends', async () => {
    server.release()
    await waitFor(() => reports().some((r) => r.activity === 'executing'), 60_000, `an executing report (reports: ${JSON.stringify(reports())})`)
    expect(reports().find((r) => r.activity === 'executing')).toMatchObject({event: 'PreToolUse', detail: 'Bash: echo made-by-codex > marker.txt; sleep 2'})
    await waitFor(() => lastReport()?.activity === 'idle', 60_000, `idle after the turn (reports: ${JSON.stringify(reports())})`)
    expect(reports().map((r) => r.activity)).toEqual(['thinking', 'executing', 'thinking', 'idle'])
    expect(lastReport()).toMatchObject({event: 'Stop', turnEnded: true})
    expect(readFileSync(join(workdir, 'marker.txt'), 'utf8')).toBe('made-by-codex\n')
    expect(git(workdir, 'branch', '--show-current').trim()).toBe('svc/fix')
    expect(toolOutputs(server.responses().at(-1)!.body).join('\n')).toMatch(/exited with code 0/)
  })

  it('a message typed into the pane is the next prompt', async () => {
    server.enqueue({text: 'second answer'})
    const seen = server.requests.length
    await typeAndSubmit('next step please')
    await server.waitForRequest((r) => userTexts(r.body).at(-1) === 'next step please', 60_000, 'request carrying the message', seen)
    await waitFor(() => reports().filter((r) => r.activity === 'idle').length === 2, 60_000, 'idle after the second turn')
  })

  it('usage: `svc hook codex Stop` reports the running token totals from the transcript the payload names', async () => {
    const stops = readFileSync(events, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.event === 'Stop')
    // A stand-in Hub that records the status report the real hook entry POSTs.
    const posted: Array<{url: string; auth: string; body: any}> = []
    const hub = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        posted.push({url: req.url ?? '', auth: String(req.headers.authorization), body: JSON.parse(body)})
        res.writeHead(200, {'content-type': 'application/json'}).end('{}')
      })
    })
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r))
    try {
      const port = (hub.address() as AddressInfo).port
      // Not spawnSync: the stand-in Hub answers from this very process.
      const child = spawn(process.execPath, [BIN, 'hook', 'codex', 'Stop'], {
        env: {PATH: process.env.PATH, SVC_HUB_ENDPOINT: `http://127.0.0.1:${port}`, SVC_AGENT_ID: 'a-1', SVC_AUTH_TOKEN: 'svc_agt_test'},
        stdio: ['pipe', 'ignore', 'pipe'],
      })
      let err = ''
      child.stderr!.on('data', (d) => (err += d))
      child.stdin!.end(JSON.stringify(stops.at(-1).payload))
      const code = await new Promise<number | null>((r) => child.on('close', r))
      expect(code, err).toBe(0)
      expect(err).toBe('')
    } finally {
      await new Promise((r) => hub.close(r))
    }
    // The server bills 20 output tokens per answer; the title request is a thread of its own.
    const billed = server.responses().filter((q) => !q.body?.text?.format?.schema?.properties?.title)
    expect(posted).toHaveLength(1)
    expect(posted[0]).toMatchObject({url: '/api/v1/agents/a-1/status', auth: 'Bearer svc_agt_test'})
    expect(posted[0].body).toMatchObject({
      activity: 'idle',
      turnEnded: true,
      usage: {sessionId: stops.at(-1).payload.session_id, modelCalls: billed.length, outputTokens: 20 * billed.length, model: 'gpt-5.1-codex'},
    })
  })

  it('restart: resume --last continues the same session with its history', async () => {
    await killTmuxServer(tmuxDir)
    server.enqueue({text: 'resumed answer'})
    const resumed = {...ctx, resume: true, task: undefined}
    await codex.prepare(resumed)
    start(resumed)
    await waitFor(() => /next step please/.test(pane()), 60_000, `the resumed transcript in the pane (pane:\n${pane()})`)
    const seen = server.requests.length
    await typeAndSubmit('after restart')
    const r = await server.waitForRequest((q) => userTexts(q.body).at(-1) === 'after restart', 60_000, 'request after the restart', seen)
    expect(userTexts(r.body)).toEqual(expect.arrayContaining(['write the marker file', 'next step please', 'after restart']))
  })

  it('Esc during a running tool interrupts the turn: idle, counted as a turn', async () => {
    server.enqueue({shell: 'sleep 30'})
    const before = reports().length
    await typeAndSubmit('run the long one')
    await waitFor(() => reports().slice(before).some((r) => r.detail === 'Bash: sleep 30'), 60_000, 'the long command running')
    tmux('send-keys', '-t', '=codex:', 'Escape')
    await waitFor(() => lastReport()?.event === 'Interrupt', 30_000, `an Interrupt hook (reports: ${JSON.stringify(reports().slice(before))})`)
    expect(lastReport()).toMatchObject({activity: 'idle', turnEnded: true})
  })

  it('the default model (code mode: the model writes JavaScript that calls exec_command) reports the same Bash tool', async () => {
    await killTmuxServer(tmuxDir)
    const fresh = {...ctx, home: join(dir, 'home-default-model'), model: undefined, thinkingLevel: undefined, task: 'write the second marker'}
    mkdirSync(fresh.home)
    server.enqueue({shell: 'echo code-mode > marker2.txt'}, {text: 'done'})
    const before = reports().length
    await codex.prepare(fresh)
    start(fresh)
    const first = await server.waitForRequest((r) => userTexts(r.body).includes('write the second marker'), 60_000, 'the default-model request')
    // Code mode: the tools come as an `additional_tools` input item with a custom `exec` tool.
    expect(JSON.stringify(first.body.input)).toContain('"additional_tools"')
    await waitFor(() => reports().slice(before).some((r) => r.activity === 'idle'), 60_000, `idle (reports: ${JSON.stringify(reports().slice(before))})`)
    expect(reports().slice(before).find((r) => r.activity === 'executing')).toMatchObject({event: 'PreToolUse', detail: 'Bash: echo code-mode > marker2.txt'})
    expect(readFileSync(join(workdir, 'marker2.txt'), 'utf8')).toBe('code-mode\n')
  })

  it('control: without the work tree trusted, Codex stops at its folder-trust dialog (what the first run checks is absent)', async () => {
    await killTmuxServer(tmuxDir)
    const untrusted = {...ctx, home: join(dir, 'home-untrusted'), task: undefined}
    mkdirSync(untrusted.home)
    await codex.prepare(untrusted)
    const config = join(untrusted.home, '.codex', 'config.toml')
    const prepared = readFileSync(config, 'utf8')
    const trust = `[projects.${JSON.stringify(workdir)}]\ntrust_level = "trusted"\n`
    expect(prepared).toContain(trust)
    writeFileSync(config, prepared.replace(trust, ''))
    start(untrusted)
    await waitFor(() => DIALOG.test(pane()), 30_000, `the folder-trust dialog (pane:\n${pane()})`)
    expect(pane()).toContain(workdir)
  })
})

/**
 * The whole path: a real Hub with its co-located broker (local tmux runtime), a registered git
 * checkout, `svc agent create fix --harness codex "<task>"`, the real Codex CLI against the
 * scripted server, its hooks running `svc hook codex <event>` into the Hub.
 */
describe('svc agent create --harness codex against a workstation Hub', {timeout: 240_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-codex-hub-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-codex-tmux-'))
  const checkout = join(home, 'checkout')
  let model: ResponsesServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let agent: {id: string; workspace: {path: string; branch: string}}
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const pane = () => tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout
  const svc = (args: string[]) => runCli(args, {env, cwd: checkout, timeoutMs: 60_000})
  /** The agent as GET /api/v1/agents/:id answers (direct HTTP: polling through the CLI is slow here). */
  const getAgent = async () => {
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const res = await fetch(`${server.url}/api/v1/agents/${agent.id}`, {headers: {authorization: `Bearer ${token}`}})
    return ((await res.json()) as {agent: Record<string, any>}).agent
  }
  const seen: string[] = []
  const waitActivity = (want: (a: Record<string, any>) => boolean, what: string, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const a = await getAgent()
        const key = `${a.activity}${a.detail ? ` (${a.detail})` : ''}`
        if (seen.at(-1) !== key) seen.push(key)
        return want(a) ? a : null
      },
      timeoutMs,
      `${what} (activities seen: ${seen.join(' -> ')}; pane:\n${agent ? pane() : ''})`,
    )

  beforeAll(async () => {
    model = await startResponsesServer()
    mkdirSync(join(home, '.svc'), {recursive: true})
    // Only the model endpoint is fake: the harness config's env points Codex at it, and its key
    // satisfies the harness's OPENAI_API_KEY need (no secret required).
    writeFileSync(
      join(home, '.svc', 'settings.yaml'),
      `schema_version: "1"\nharness_configs:\n  codex:\n    harness: codex\n    env:\n      OPENAI_BASE_URL: ${model.baseUrl}\n      OPENAI_API_KEY: sk-test-not-a-real-key\n`,
    )
    mkdirSync(checkout)
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    writeFileSync(join(checkout, '.gitignore'), '.svc/\n')
    git(checkout, 'add', '-A')
    git(checkout, 'commit', '-q', '-m', 'init')
    ;({server, env} = await startLocalRuntimeServer(home, tmuxDir))
    env = {...env, PATH: `${BIN_DIR}:${env.PATH}`}
    const reg = await svc(['project', 'register', 'demo', '--no-remote', '--json'])
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
  })
  afterAll(async () => {
    await server?.stop()
    tmux('kill-server')
    await model?.close()
    rmSync(home, {recursive: true, force: true})
    rmSync(tmuxDir, {recursive: true, force: true})
  })

  it('create: thinking while the model holds its answer, and the first run shows no dialog', async () => {
    model.hold()
    model.enqueue({shell: 'echo from-codex > hub-marker.txt; sleep 3'}, {text: 'I wrote hub-marker.txt'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'codex', 'write the hub marker', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    expect(r.json.agent).toMatchObject({name: 'fix', phase: 'running', harnessConfig: 'codex', workspace: {branch: 'svc/fix'}})
    await model.waitForRequest((q) => userTexts(q.body).includes('write the hub marker'), 60_000, 'the task as the first prompt')
    await waitActivity((a) => a.activity === 'thinking', 'thinking while the answer is held')
    await waitFor(() => /Ask Codex to do anything|GPT-|gpt-/.test(pane()), 30_000, `the Codex prompt UI (pane:\n${pane()})`)
    expect(pane()).not.toMatch(DIALOG)
  })

  it('executing with the tool while it runs, its file in the work tree on svc/fix, idle after the turn', async () => {
    model.release()
    const running = await waitActivity((a) => a.activity === 'executing', 'executing while the tool runs')
    expect(running.detail).toBe('Bash: echo from-codex > hub-marker.txt; sleep 3')
    const idle = await waitActivity((a) => a.activity === 'idle', 'idle after the turn')
    // The turn's end belongs to no tool: the command's detail is gone.
    expect(idle.detail).toBe('')
    expect(readFileSync(join(agent.workspace.path, 'hub-marker.txt'), 'utf8')).toBe('from-codex\n')
    expect(git(agent.workspace.path, 'branch', '--show-current').trim()).toBe('svc/fix')
    expect(existsSync(join(checkout, 'hub-marker.txt'))).toBe(false)
    expect(idle.turns).toBe(1)
  })

  it('svc message reaches Codex as its next prompt', async () => {
    model.enqueue({text: 'second answer'})
    const before = model.requests.length
    const r = await svc(['message', 'fix', 'next step please', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    await model.waitForRequest((q) => userTexts(q.body).at(-1) === 'next step please', 60_000, 'the message as the next prompt', before)
    await waitActivity((a) => a.activity === 'idle' && a.turns === 2, 'idle after the second turn')
  })

  it('stop and start: Codex resumes its last session, history included', async () => {
    expect((await svc(['agent', 'stop', 'fix', '--json'])).json.agent.phase).toBe('stopped')
    model.enqueue({text: 'resumed answer'})
    const started = await svc(['agent', 'start', 'fix', '--json'])
    expect(started.code, started.stderr + started.stdout).toBe(0)
    await waitFor(() => /next step please/.test(pane()), 60_000, `the resumed transcript in the pane (pane:\n${pane()})`)
    const before = model.requests.length
    expect((await svc(['message', 'fix', 'after restart', '--json'])).code).toBe(0)
    const q = await model.waitForRequest((r) => userTexts(r.body).at(-1) === 'after restart', 60_000, 'the message after the restart', before)
    expect(userTexts(q.body)).toEqual(expect.arrayContaining(['write the hub marker', 'next step please', 'after restart']))
  })
})
