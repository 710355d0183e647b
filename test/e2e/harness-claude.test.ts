import {execFileSync, spawn} from 'node:child_process'
import {createHmac} from 'node:crypto'
import {createServer, type Server} from 'node:http'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, type RunningServer} from '../helpers/cli.js'
import {CLAUDE_KEY as KEY, startClaudeHub, type ClaudeHub} from '../helpers/claude-hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {userText, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

const WEBHOOK_SECRET = 'e2e-webhook-secret'

/**
 * Done-when of the real-agents issue for Claude Code: a real `svc server start` (SQLite) whose
 * co-located broker runs the real `claude` CLI in tmux, in a git worktree of a registered
 * checkout; only the model endpoint is fake (the scripted Anthropic server). The agent is watched
 * through GET /api/v1/agents/:id, as a client would. The attention issue's done-when rides along:
 * `svc agent wait --for input` returns at Claude Code's permission prompt, a configured webhook
 * receives that event once, signed, and `svc agent get` shows the session's tokens and cost.
 */
describe('svc agent with the claude harness on a workstation Hub', {timeout: 300_000}, () => {
  let hub: ClaudeHub
  let checkout: string
  let model: AnthropicServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let token: string
  let agent: {id: string; workspace?: {path: string; branch: string}}
  let hooks: Server
  const deliveries: Array<{headers: Record<string, string | string[] | undefined>; raw: string}> = []
  const pane = () => hub.tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout
  const svc = (args: string[], opts: {cwd?: string} = {}) => hub.svc(args, opts)
  const get = async () => {
    const res = await fetch(`${server.url}/api/v1/agents/${agent.id}`, {headers: {authorization: `Bearer ${token}`}})
    if (!res.ok) throw new Error(`GET agent: ${res.status} ${await res.text()}`)
    return (await res.json()).agent
  }
  /** Polls the agent until `pred` holds (bounded), failing with what it last saw and the pane. */
  const agentUntil = async (pred: (a: any) => boolean, what: string, timeoutMs = 90_000) => {
    let last: any
    try {
      return await waitFor(async () => {
        last = await get()
        return pred(last) ? last : undefined
      }, timeoutMs, what)
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlast seen: ${JSON.stringify({phase: last?.phase, activity: last?.activity, detail: last?.detail})}\npane:\n${pane()}`)
    }
  }

  beforeAll(async () => {
    hooks = createServer((req, res) => {
      let raw = ''
      req.on('data', (d) => (raw += d))
      req.on('end', () => {
        deliveries.push({headers: req.headers, raw})
        res.end()
      })
    })
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r))
    const hooksUrl = `http://127.0.0.1:${(hooks.address() as {port: number}).port}/hook`
    hub = await startClaudeHub('claude', {
      settings: () => `server:\n  notification_channels:\n    - type: webhook\n      url: ${hooksUrl}\n      allow_private: true\n      events: [waiting_for_input]\n      secret: ${WEBHOOK_SECRET}\n`,
    })
    ;({checkout, model, server, env, token} = hub)
  })
  afterAll(async () => {
    await hub?.stop()
    hooks?.close()
  })

  it('svc agent create fix --harness claude: thinking, executing (tool named), waiting_for_input on a permission prompt, the file in its worktree, idle', async () => {
    model.enqueue(
      // `sleep` runs without a permission prompt: the agent is `executing` while it runs.
      {tool: {name: 'Bash', input: {command: 'sleep 8', description: 'wait a moment'}}},
      // Writing a file asks first (Claude Code's default permission mode).
      {tool: {name: 'Bash', input: {command: 'echo hello > hello.txt', description: 'write hello.txt'}}},
      {text: 'Wrote hello.txt.'},
    )
    const release = model.hold()
    const r = await svc(['agent', 'create', 'fix', '--harness', 'claude', 'write hello into hello.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    expect(r.json.agent).toMatchObject({name: 'fix', phase: 'running', harnessConfig: 'claude'})
    expect(agent.workspace?.branch).toBe('svc/fix')

    // The task reached the model as the first prompt, with no dialog in the way; the model holds.
    const first = await model.waitForRequest((q) => q.main && userText(q.body).includes('write hello into hello.txt'), 90_000, 'the first model request')
    expect(first.headers['x-api-key']).toBe(KEY)
    await agentUntil((a) => a.activity === 'thinking', 'thinking while the model holds its answer')
    expect(pane()).not.toMatch(/trust this folder|Do you want to use this API key|Choose the text style|Select login method/i)
    release()

    await agentUntil((a) => a.activity === 'executing' && a.detail === 'Bash: sleep 8', 'executing "Bash: sleep 8" while the tool runs')
    // Someone waits for the agent to need them: the wait returns at the permission prompt.
    const wait = spawn(process.execPath, [BIN, 'agent', 'wait', 'fix', '--for', 'input', '--json'], {cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe']})
    let waitOut = ''
    wait.stdout!.on('data', (d) => (waitOut += d))
    const waitCode = await new Promise<number | null>((r) => wait.on('exit', r))
    expect(waitCode, waitOut).toBe(0)
    const waited = JSON.parse(waitOut).agent
    expect(waited).toMatchObject({id: agent.id, phase: 'running', activity: 'waiting_for_input'})
    expect(waited.detail).toContain('echo hello > hello.txt')
    const waiting = await agentUntil((a) => a.activity === 'waiting_for_input', 'waiting_for_input at the permission prompt')
    expect(waiting.detail).toContain('echo hello > hello.txt')
    // The webhook got the event, signed with the channel's secret.
    await waitFor(() => deliveries.length > 0, 30_000, 'the waiting_for_input webhook')
    const [hook] = deliveries
    expect(hook.headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', WEBHOOK_SECRET).update(hook.raw).digest('hex')}`)
    expect(JSON.parse(hook.raw)).toMatchObject({event: 'waiting_for_input', agent: {id: agent.id, name: 'fix', activity: 'waiting_for_input'}})
    // The hook reports before the dialog is drawn: answer it once it is on the screen.
    await waitFor(() => /Do you want to proceed\?/.test(pane()), 60_000, 'the permission dialog on the screen')
    const keys = await svc(['keys', 'fix', 'Enter', '--json'])
    expect(keys.code, keys.stderr + keys.stdout).toBe(0)

    const idle = await agentUntil((a) => a.activity === 'idle', 'idle after the turn')
    // One turn ended (counted for max_turns).
    expect(idle.turns).toBe(1)
    // Exactly one delivery for the one time the agent needed its person.
    expect(deliveries).toHaveLength(1)
    // The session's usage, from the hook's Stop report: three model calls of the scripted usage.
    // It rides with idle, or follows it in a report of its own when Claude Code writes its
    // transcript late (hook-entry.ts): wait for it rather than read it with idle.
    const u = model.usage
    const {usage} = await agentUntil((a) => (a.usage?.modelCalls ?? 0) >= 3, "the turn's usage at the Hub")
    expect(usage).toMatchObject({modelCalls: 3, inputTokens: 3 * u.input_tokens, outputTokens: 3 * u.output_tokens, cacheReadTokens: 3 * u.cache_read_input_tokens, cacheWriteTokens: 3 * u.cache_creation_input_tokens})
    expect(usage.costUsd).toBeGreaterThan(0)
    const shown = await svc(['agent', 'get', 'fix'])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout.match(/^Turns:/gm)).toEqual(['Turns:'])
    expect(shown.stdout).toMatch(new RegExp(`Usage:\\s+${3 * u.input_tokens} in, ${3 * u.output_tokens} out, ${3 * (u.cache_read_input_tokens + u.cache_creation_input_tokens)} cache, 3 model calls, \\$\\d+\\.\\d+`))
    const ws = idle.workspace
    expect(readFileSync(join(ws.path, 'hello.txt'), 'utf8')).toBe('hello\n')
    expect(execFileSync('git', ['branch', '--show-current'], {cwd: ws.path, encoding: 'utf8'}).trim()).toBe('svc/fix')
    // The user's checkout itself is untouched.
    expect(existsSync(join(checkout, 'hello.txt'))).toBe(false)
  })

  it('svc message fix reaches Claude Code as its next prompt, and the turn ends idle again', async () => {
    model.enqueue({text: 'Second turn done.'})
    const before = model.mainRequests().length
    const sent = await svc(['message', 'fix', 'now add a second line', '--json'])
    expect(sent.code, sent.stderr + sent.stdout).toBe(0)
    const next = await model.waitForRequest((q) => q.main && model.mainRequests().indexOf(q) >= before && userText(q.body).includes('now add a second line'), 90_000, 'the message as the next prompt')
    // The same conversation: the first task is in its history.
    expect(userText(next.body)).toContain('write hello into hello.txt')
    await agentUntil((a) => a.activity === 'idle' && a.turns === 2, 'idle after the second turn')
    // Stop can run before the answer is drawn on a loaded machine.
    await waitFor(() => /Second turn done/.test(pane()), 60_000, 'the answer on the screen')
  })
})
