import {spawn, spawnSync} from 'node:child_process'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {claude, claudeHookUsage, claudeOnHook} from '../../src/broker/harnesses/claude.js'
import type {LaunchContext} from '../../src/broker/harnesses/types.js'
import {BIN} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startAnthropicServer, userText, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const KEY = 'sk-ant-test-key-for-the-scripted-server-0123456789'

/**
 * The real Claude Code CLI, laid out by the module's `prepare` and started with its `args` and
 * `env` in tmux exactly as the broker does, against the scripted Anthropic server. Its hooks run a
 * tiny recorder instead of `svc hook` so the payloads Claude Code writes can be checked against
 * `onHook`. (The same CLI under a real Hub and broker: harness-claude.test.ts.)
 */
describe('Claude Code CLI with the claude module', {timeout: 240_000}, () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-claude-cli-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-claude-tmux-'))
  const recorder = join(root, 'record-hook.mjs')
  const log = join(root, 'hooks.jsonl')
  let server: AnthropicServer
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const pane = (s: string) => tmux('capture-pane', '-p', '-t', `=${s}:`).stdout
  const hooks = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as {event: string; payload: any})
      : []

  beforeAll(async () => {
    server = await startAnthropicServer()
    writeFileSync(
      recorder,
      `import {appendFileSync, readFileSync} from 'node:fs'\nconst [log, event] = process.argv.slice(2)\nlet payload = null\ntry { payload = JSON.parse(readFileSync(0, 'utf8')) } catch {}\nappendFileSync(log, JSON.stringify({event, payload}) + '\\n')\n`,
    )
    spawnSync('git', ['init', '-q', join(root, 'work')])
  })
  afterAll(async () => {
    // Claude Code writes its session files as it exits: wait for its processes to end first.
    const pids = tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout.split('\n').filter(Boolean)
    tmux('kill-server')
    await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
    await server?.close()
    // Claude Code may still be writing its session files as it exits.
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
    rmSync(tmuxDir, {recursive: true, force: true})
  })

  const launch = async (session: string, over: Partial<LaunchContext>) => {
    const ctx: LaunchContext = {
      agentId: 'a1',
      agentName: 'fix',
      home: join(root, 'home'),
      workdir: join(root, 'work'),
      resume: false,
      env: {ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url},
      authType: 'api-key',
      hookCommand: [process.execPath, recorder, log],
      userHome: root,
      ...over,
    }
    await claude.prepare(ctx)
    const env = {...claude.env!(ctx), ...ctx.env, HOME: ctx.home, PATH: `${BIN_DIR}:/usr/bin:/bin`, TERM: 'xterm-256color', LANG: 'C.UTF-8'}
    const argv = ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), claude.executable, ...claude.args(ctx)]
    const r = tmux('new-session', '-d', '-s', session, '-x', '160', '-y', '50', '-c', ctx.workdir, ...argv)
    expect(r.code, r.stderr).toBe(0)
    return ctx
  }

  it('first run shows no dialog: the task goes straight to the model, a Bash call waits for permission, then the turn ends', async () => {
    server.enqueue({tool: {name: 'Bash', input: {command: 'echo hello > out.txt', description: 'write out.txt'}}}, {text: 'Wrote out.txt.'})
    const release = server.hold()
    const ctx = await launch('first', {task: '-write hello to out.txt', thinkingLevel: 'low'})
    // The held first request arrived without anyone touching the terminal: no onboarding, theme,
    // key approval or trust dialog stood in the way; a leading dash stayed part of the prompt.
    const first = await server.waitForRequest((r) => r.main, 90_000, 'the first model request')
    expect(userText(first.body)).toContain('-write hello to out.txt')
    expect(first.body.stream).toBe(true)
    expect(first.path).toBe('/v1/messages?beta=true')
    expect(first.headers['x-api-key']).toBe(KEY)
    expect(first.body.output_config?.effort).toBe('low')
    // Thinking stays on at an effort level: Claude Code 2.1.197 asks for adaptive thinking (the
    // contrast for the thinking-off request of the restart below).
    expect(first.body.thinking).toEqual({type: 'adaptive'})
    expect(pane('first')).not.toMatch(/trust this folder|Choose the text style|Do you want to use this API key|Select login method/i)
    release()

    // Default permission mode: Claude Code asks before running the command.
    await waitFor(() => /Do you want to proceed\?/.test(pane('first')), 60_000, `the permission prompt; pane:\n${pane('first')}`)
    await waitFor(() => hooks().some((h) => h.event === 'PermissionRequest'), 30_000, 'the PermissionRequest hook')
    tmux('send-keys', '-t', '=first:', 'Enter')
    await waitFor(() => hooks().some((h) => h.event === 'Stop'), 60_000, `the Stop hook; pane:\n${pane('first')}`)
    expect(readFileSync(join(ctx.workdir, 'out.txt'), 'utf8')).toBe('hello\n')

    // What each hook reports, in the order Claude Code fired them.
    const reports = hooks()
      .map((h) => claudeOnHook(h.event, h.payload))
      .filter((r) => r !== null)
    const activities = reports.map((r) => r!.activity).filter((a, i, all) => a !== all[i - 1])
    expect(activities).toEqual(['thinking', 'executing', 'waiting_for_input', 'thinking', 'idle'])
    expect(reports).toContainEqual({activity: 'executing', detail: 'Bash: echo hello > out.txt'})
    expect(reports.at(-1)).toEqual({activity: 'idle', detail: '', turnEnded: true})
    const stop = hooks().find((h) => h.event === 'Stop')!
    const usage = await claudeHookUsage('Stop', stop.payload)
    expect(usage).toMatchObject({sessionId: stop.payload.session_id, modelCalls: 2, inputTokens: 2 * server.usage.input_tokens, outputTokens: 2 * server.usage.output_tokens})
    // The API key itself was written nowhere in the agent's HOME.
    const grep = spawnSync('grep', ['-rl', KEY, ctx.home], {encoding: 'utf8'})
    expect(grep.stdout).toBe('')
  })

  it('`svc hook claude Stop` with the payload Claude Code wrote posts idle, the turn end and the session usage', async () => {
    const stop = hooks().find((h) => h.event === 'Stop')!
    const bodies: any[] = []
    const hub = http.createServer((req, res) => {
      let text = ''
      req.on('data', (c) => (text += c))
      req.on('end', () => {
        bodies.push({url: req.url, auth: req.headers.authorization, body: JSON.parse(text)})
        res.writeHead(200, {'content-type': 'application/json'}).end('{}')
      })
    })
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r))
    const traceFile = join(root, 'hook-trace.jsonl')
    const spawnedAt = Date.now()
    try {
      const env = {PATH: process.env.PATH, SVC_HUB_ENDPOINT: `http://127.0.0.1:${(hub.address() as AddressInfo).port}`, SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN: 'svc_agt_test', SVC_HOOK_TRACE: traceFile}
      // Not spawnSync: this process must answer the hook's POST meanwhile.
      const child = spawn(process.execPath, [BIN, 'hook', 'claude', 'Stop'], {env, stdio: ['pipe', 'ignore', 'pipe']})
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += d))
      child.stdin.end(JSON.stringify(stop.payload))
      const code = await new Promise((r) => child.on('close', r))
      expect(code, stderr).toBe(0)
      expect(stderr).toBe('')
    } finally {
      hub.close()
    }
    // The usage rides with the idle report when the transcript is read within the hook's grace
    // (USAGE_GRACE_MS); on a loaded machine it follows in a report of its own. Either way: idle
    // and the turn's end first, and the session's usage once.
    const usage = {sessionId: stop.payload.session_id, model: 'claude-opus-4-8', modelCalls: 2, inputTokens: 200, outputTokens: 40, cacheReadTokens: 10, cacheWriteTokens: 14}
    const idle = {activity: 'idle', detail: '', turnEnded: true, heartbeat: true}
    const expected = bodies.length === 1 ? [{...idle, usage}] : [idle, {heartbeat: true, usage}]
    expect(bodies).toEqual(expected.map((body) => ({url: '/api/v1/agents/a1/status', auth: 'Bearer svc_agt_test', body})))
    // SVC_HOOK_TRACE: one line per report, with when the hook's process started, sent and was answered.
    const lines = readFileSync(traceFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toHaveLength(bodies.length)
    expect(lines[0]).toEqual({agentId: 'a1', harness: 'claude', event: 'Stop', activity: 'idle', status: 200, startedAt: expect.any(Number), sentAt: expect.any(Number), answeredAt: expect.any(Number)})
    const [t] = lines
    expect(t.startedAt).toBeGreaterThanOrEqual(spawnedAt - 5)
    expect(t.sentAt).toBeGreaterThanOrEqual(t.startedAt)
    expect(t.answeredAt).toBeGreaterThanOrEqual(t.sentAt)
    expect(t.answeredAt).toBeLessThanOrEqual(Date.now())
  })

  it('a restart with resume continues the same conversation (--continue), thinking off disables thinking', async () => {
    tmux('kill-session', '-t', '=first')
    const before = server.mainRequests().length
    server.enqueue({text: 'Still here.'})
    await launch('again', {resume: true, thinkingLevel: 'off'})
    await waitFor(() => /❯/.test(pane('again')), 90_000, `the prompt of the resumed session; pane:\n${pane('again')}`)
    // The resumed session shows the earlier turn and sends it with the next prompt.
    await waitFor(() => /Wrote out\.txt/.test(pane('again')), 30_000, `the earlier conversation; pane:\n${pane('again')}`)
    tmux('send-keys', '-t', '=again:', '-l', 'and now?')
    tmux('send-keys', '-t', '=again:', 'Enter')
    const next = await server.waitForRequest((r) => r.main && server.mainRequests().indexOf(r) >= before && userText(r.body).includes('and now?'), 60_000, 'the next prompt')
    expect(JSON.stringify(next.body.messages)).toContain('-write hello to out.txt')
    // MAX_THINKING_TOKENS=0 makes Claude Code send thinking disabled outright (not just leave the
    // field out); without it the same CLI sends {type: 'adaptive'}, as the first request did.
    expect(next.body.thinking).toEqual({type: 'disabled'})
  })
})
