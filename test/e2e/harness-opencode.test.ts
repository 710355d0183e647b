import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {gate, lastUserText, startChatModelServer, type ChatModelServer} from '../helpers/model-servers/openai-chat-opencode.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {cwd, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

/**
 * The first turn's command: it writes the marker, then runs until the test makes a flag file in
 * the worktree (the sandbox's /tmp is private), so the test's polling sees its `executing` for
 * certain (an `executing` as short as one `echo` can be over between two polls).
 */
const MARKER_COMMAND = 'echo from-opencode > hub-marker.txt; while [ ! -e .svc-test-go ]; do sleep 0.1; done'

/**
 * The whole path: a real Hub with its co-located broker (local tmux runtime), a registered git
 * checkout, `svc agent create fix --harness opencode "<task>"`, the real OpenCode TUI against the
 * scripted Chat Completions server (a custom `@ai-sdk/openai-compatible` provider given through
 * the config's env `OPENCODE_CONFIG_CONTENT`), its svc plugin running `svc hook opencode <event>`
 * into the Hub, and its permission requests as approvals decided through svc, the plugin replying
 * to OpenCode. OpenCode starts slowly on a loaded machine (a 185 MB Bun binary): waits are long.
 */
describe('svc agent create --harness opencode against a workstation Hub', {timeout: 400_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-opencode-hub-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-opencode-tmux-'))
  const checkout = join(home, 'checkout')
  let model: ChatModelServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let agent: {id: string; workspace: {path: string; branch: string}}
  const held = gate()
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const pane = (id = agent.id) => tmux('capture-pane', '-p', '-t', `=svc-${id}:`).stdout
  const svc = (args: string[]) => runCli(args, {env, cwd: checkout, timeoutMs: 60_000})
  const getAgent = async (id = agent.id) => {
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const res = await fetch(`${server.url}/api/v1/agents/${id}`, {headers: {authorization: `Bearer ${token}`}})
    return ((await res.json()) as {agent: Record<string, any>}).agent
  }
  /** The tail of OpenCode's own log in the agent's HOME: what it did when a wait times out. */
  const openCodeLog = (id = agent.id) => {
    const dir = join(home, '.svc', 'broker', 'homes', id, '.local', 'share', 'opencode', 'log')
    const files = existsSync(dir) ? readdirSync(dir).sort() : []
    return files.length ? readFileSync(join(dir, files.at(-1)!), 'utf8').split('\n').slice(-40).join('\n') : `(no log in ${dir})`
  }
  /** Activities seen per agent id, in order (consecutive repeats folded). */
  const seenBy = new Map<string, string[]>()
  const waitActivity = (want: (a: Record<string, any>) => boolean, what: string, timeoutMs = 120_000, id = agent.id) => {
    const seen = seenBy.get(id) ?? seenBy.set(id, []).get(id)!
    return waitFor(
      async () => {
        const a = await getAgent(id)
        const key = `${a.activity}${a.detail ? ` (${a.detail})` : ''}`
        if (seen.at(-1) !== key) seen.push(key)
        return want(a) ? a : null
      },
      timeoutMs,
      `${what} (activities seen: ${seen.join(' -> ')}; model turns: ${model.turns().length}; pane:\n${id ? pane(id) : ''}\nOpenCode's log:\n${id ? openCodeLog(id) : ''})`,
    )
  }

  const approvalsOf = async (id: string, state = '') => {
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const res = await fetch(`${server.url}/api/v1/agents/${id}/approvals${state ? `?state=${state}` : ''}`, {headers: {authorization: `Bearer ${token}`}})
    return ((await res.json()) as {approvals: Array<Record<string, any>>}).approvals
  }
  /** The one pending approval the person sees in GET /api/v1/approvals, once there is one. */
  const pendingApproval = async (id: string, timeoutMs = 240_000) => {
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    return waitFor(
      async () => {
        const res = await fetch(`${server.url}/api/v1/approvals?state=pending`, {headers: {authorization: `Bearer ${token}`}})
        return ((await res.json()) as {approvals: Array<Record<string, any>>}).approvals.find((a) => a.agentId === id)
      },
      timeoutMs,
      `a pending approval of the agent (pane:\n${pane(id)}\nOpenCode's log:\n${openCodeLog(id)})`,
    )
  }

  beforeAll(async () => {
    model = await startChatModelServer()
    mkdirSync(join(home, '.svc'), {recursive: true})
    // Only the model endpoint is fake: a custom provider pointing at it, and a key for the
    // harness's ANTHROPIC_API_KEY need (never sent anywhere: the model is the scripted one).
    const provider = {
      model: 'scripted/m1',
      provider: {scripted: {npm: '@ai-sdk/openai-compatible', name: 'Scripted', options: {baseURL: model.baseURL, apiKey: 'sk-test'}, models: {m1: {name: 'M1'}}}},
    }
    // OpenCode asks before every bash command (`permission: {bash: "ask"}`, merged with the
    // provider in the one inline config), so one agent (one cold start of OpenCode, the slow part
    // of this file) shows both the activity and the approvals.
    const config = {...provider, permission: {bash: 'ask'}}
    writeFileSync(
      join(home, '.svc', 'settings.yaml'),
      [
        'schema_version: "1"',
        'harness_configs:',
        '  opencode:',
        '    harness: opencode',
        '    env:',
        `      OPENCODE_CONFIG_CONTENT: ${JSON.stringify(JSON.stringify(config))}`,
        '      ANTHROPIC_API_KEY: sk-test-not-a-real-key',
        '',
      ].join('\n'),
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
    held.release()
    await server?.stop()
    tmux('kill-server')
    await model?.close()
    rmSync(home, {recursive: true, force: true})
    rmSync(tmuxDir, {recursive: true, force: true})
  })

  it('create: the task is the first prompt, thinking while the model holds its answer, no dialog', async () => {
    model.push({tool: 'bash', args: {command: MARKER_COMMAND, description: 'write the marker'}, hold: held.promise}, {text: 'I wrote hub-marker.txt'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'opencode', 'write the hub marker', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    expect(r.json.agent).toMatchObject({name: 'fix', phase: 'running', harnessConfig: 'opencode', workspace: {branch: 'svc/fix'}})
    await model.waitForRequest((q) => !q.side && lastUserText(q.body).includes('write the hub marker'), 240_000, 'the task as the first prompt')
    await waitActivity((a) => a.activity === 'thinking', 'thinking while the answer is held')
    // The TUI is up: the prompt box with the agent and model, nothing asking the user anything.
    await waitFor(() => /Build · M1/.test(pane()), 60_000, `the OpenCode prompt UI (pane:\n${pane()})`)
    expect(pane()).not.toMatch(/Update available|Select a model|Connect a provider|login|Press enter/i)
  })

  it('the tool asks: an approval in GET /api/v1/approvals beside the TUI dialog; svc agent approve runs it with no key sent, executing, its file on svc/fix, idle', async () => {
    held.release()
    // OpenCode asks (permission.asked): the plugin's hook holds the request on the Hub.
    const asked = await pendingApproval(agent.id)
    expect(asked).toMatchObject({agentId: agent.id, tool: 'bash', summary: MARKER_COMMAND, state: 'pending', input: {patterns: expect.any(Array), metadata: {command: MARKER_COMMAND}}})
    const waiting = await waitActivity((a) => a.activity === 'waiting_for_input', 'waiting_for_input at the permission prompt', 60_000)
    expect(waiting.detail).toBe(`Permission: bash: ${MARKER_COMMAND}`)
    // The TUI's own dialog is up meanwhile (OpenCode 1.18: "Allow once   Allow always   Reject").
    await waitFor(() => /Permission required/.test(pane()) && /Allow once/.test(pane()), 60_000, `the permission dialog (pane:\n${pane()})`)
    expect(existsSync(join(agent.workspace.path, 'hub-marker.txt'))).toBe(false)

    // Allowed through svc: the plugin replies to OpenCode itself; nothing is typed into the terminal.
    const ok = await svc(['agent', 'approve', 'fix', '--json'])
    expect(ok.code, ok.stderr + ok.stdout).toBe(0)
    expect(ok.json.approval).toMatchObject({id: asked.id, state: 'allowed', decidedBy: {kind: 'user'}})
    const running = await waitActivity((a) => a.activity === 'executing', 'executing once approved', 240_000)
    expect(running.detail).toBe(`bash: ${MARKER_COMMAND}`)
    await waitFor(() => existsSync(join(agent.workspace.path, 'hub-marker.txt')), 60_000, 'the approved command writes hub-marker.txt')
    // The command runs before OpenCode has redrawn its screen on a loaded machine.
    await waitFor(() => !/Permission required/.test(pane()), 60_000, 'the permission dialog gone from the screen')
    writeFileSync(join(agent.workspace.path, '.svc-test-go'), '')

    // A liveness bound, not a target: in two full-suite runs OpenCode's bash tool sat on a
    // three-second command until its own two-minute tool timeout (the agent then went idle and the
    // next test passed); alone, or beside the podman, sandbox, web and Claude tests, it takes
    // seconds. svc's promise is the idle report when the turn ends, however long the tool takes.
    const idle = await waitActivity((a) => a.activity === 'idle', 'idle after the turn', 240_000)
    // The turn's end belongs to no tool: the command's detail is gone.
    expect(idle.detail).toBe('')
    expect(readFileSync(join(agent.workspace.path, 'hub-marker.txt'), 'utf8')).toBe('from-opencode\n')
    expect(git(agent.workspace.path, 'branch', '--show-current').trim()).toBe('svc/fix')
    expect(existsSync(join(checkout, 'hub-marker.txt'))).toBe(false)
    expect(idle.turns).toBe(1)
    // The session's usage came with the idle report: the tool call and the answer, 100 + 10 tokens each.
    expect(idle.usage).toMatchObject({modelCalls: 2, inputTokens: 200, outputTokens: 20})
    expect((await approvalsOf(agent.id)).map((a) => a.state)).toEqual(['allowed'])
  })

  it('svc message reaches OpenCode as its next prompt', async () => {
    model.push({text: 'second answer'})
    const before = model.requests.length
    const r = await svc(['message', 'fix', 'next step please', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    await model.waitForRequest((q) => !q.side && lastUserText(q.body).includes('next step please'), 120_000, 'the message as the next prompt', before)
    await waitActivity((a) => a.activity === 'idle' && a.turns === 2, 'idle after the second turn')
  })

  it('a turn that ends on an API error ends idle with the error as its detail, counted once', async () => {
    // A 400 OpenCode does not retry nor recover from (a 'prompt too long' one it would compact
    // and go on with, which is a turn that ends well).
    model.push({error: 400, message: 'scripted refusal: this model does not take that request'})
    const before = model.requests.length
    const r = await svc(['message', 'fix', 'this one fails', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    await model.waitForRequest((q) => !q.side && lastUserText(q.body).includes('this one fails'), 120_000, 'the failing prompt', before)
    const failed = await waitActivity((a) => a.activity === 'idle' && a.turns === 3 && /scripted refusal/.test(a.detail), 'idle with the error after the failed turn, as the third turn')
    expect(failed.detail).toMatch(/^error: .*scripted refusal: this model does not take that request/)
    // The agent's error too (red on the pages, the harness_error webhook): OpenCode's session.error.
    expect(failed.error).toMatch(/scripted refusal: this model does not take that request/)
    // Let any late hook land: the failed turn is one turn, and its error stays shown.
    await new Promise((r) => setTimeout(r, 3000))
    expect(await getAgent(agent.id)).toMatchObject({activity: 'idle', turns: 3, detail: failed.detail, error: failed.error})
  })

  it('a retry OpenCode waits out is shown as such (thinking, "retrying: ..."), and the turn that then works clears the error', async () => {
    // A 503 OpenCode retries (after a pause of seconds), then the answer.
    model.push({error: 503, message: 'scripted overload'}, {text: 'Back again.'})
    const r = await svc(['message', 'fix', 'after the outage', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    const retrying = await waitActivity((a) => a.activity === 'thinking' && /^retrying: /.test(a.detail), 'thinking with the retry shown')
    expect(retrying.detail).toMatch(/^retrying: .*, attempt 1$/)
    expect(retrying.error).toBeNull()
    const ok = await waitActivity((a) => a.activity === 'idle' && a.turns === 4, 'idle after the retried turn')
    expect(ok).toMatchObject({detail: '', error: null})
  })

  it('svc agent approve --deny --reason: the command does not run and the model reads the reason as the tool\'s error', async () => {
    const {id, workspace: {path: ws}} = agent
    model.push({tool: 'bash', args: {command: 'echo no > denied.txt', description: 'write denied.txt'}}, {text: 'Not writing denied.txt.'})
    const before = model.requests.length
    expect((await svc(['message', 'fix', 'now write denied.txt', '--json'])).code).toBe(0)
    const asked = await pendingApproval(id, 120_000)
    expect(asked).toMatchObject({tool: 'bash', summary: 'echo no > denied.txt'})
    const no = await svc(['agent', 'approve', 'fix', '--deny', '--reason', 'no', '--json'])
    expect(no.code, no.stderr + no.stdout).toBe(0)
    expect(no.json.approval).toMatchObject({id: asked.id, state: 'denied', reason: 'no'})
    // OpenCode turns the reply's message into the tool's error and goes on with the turn.
    const toolText = (q: {body: any}) => (q.body?.messages ?? []).filter((m: any) => m.role === 'tool').map((m: any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n')
    const next = await model.waitForRequest((q) => !q.side && toolText(q).includes('Denied by the user (through svc): no'), 120_000, 'the deny reason in the tool result', before)
    expect(toolText(next)).toContain('rejected permission to use this specific tool call with the following feedback: Denied by the user (through svc): no')
    const idle = await waitActivity((a) => a.activity === 'idle' && a.turns === 5, 'idle after the denied command', 120_000, id)
    expect(idle.detail).toBe('')
    expect(existsSync(join(ws, 'denied.txt'))).toBe(false)
  })

  it('answered in the TUI first: the command runs and the approval is recorded answered at the terminal', async () => {
    const {id, workspace: {path: ws}} = agent
    model.push({tool: 'bash', args: {command: 'echo tui > tui.txt', description: 'write tui.txt'}}, {text: 'I wrote tui.txt'})
    expect((await svc(['message', 'fix', 'now write tui.txt', '--json'])).code).toBe(0)
    const asked = await pendingApproval(id, 120_000)
    // The hook may ask before the dialog is drawn: answer it once it is on the screen (Enter: "Allow once").
    await waitFor(() => /Permission required/.test(pane(id)) && /Allow once/.test(pane(id)), 60_000, `the permission dialog (pane:\n${pane(id)})`)
    const keys = await svc(['keys', 'fix', 'Enter', '--json'])
    expect(keys.code, keys.stderr + keys.stdout).toBe(0)
    await waitFor(() => existsSync(join(ws, 'tui.txt')), 60_000, 'the command answered in the TUI writes tui.txt')
    const answered = await waitFor(async () => (await approvalsOf(id)).find((a) => a.id === asked.id && a.state !== 'pending'), 60_000, 'the approval no longer pending')
    expect(answered).toMatchObject({state: 'answered', decidedBy: {kind: 'terminal'}})
    await waitActivity((a) => a.activity === 'idle' && a.turns === 6, 'idle after the command answered in the TUI', 120_000, id)
    // A decision too late changes nothing.
    const late = await svc(['agent', 'approve', 'fix', '--json'])
    expect(late.code).toBe(1)
  })
})
