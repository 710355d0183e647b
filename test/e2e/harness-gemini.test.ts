import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {delimiter, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startGeminiModelServer, type GeminiModelServer} from '../helpers/model-servers/gemini.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const FAKE_KEY = 'fake-gemini-key-for-the-scripted-server'
/** Bounded waits on a loaded 2-core machine: Gemini CLI alone takes many seconds to start there. */
const LONG = 120_000

/**
 * The real Gemini CLI (0.61, node_modules/.bin/gemini) as an svc agent: a workstation Hub whose
 * co-located broker runs it in tmux in the agent's git worktree, against a scripted Gemini API on
 * 127.0.0.1 (the only fake). Its own hooks move the agent through thinking, waiting_for_input
 * (its confirmation before a shell command), executing and idle.
 */
describe('gemini harness end to end', {timeout: 420_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-gemini-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-gemini-tmux-'))
  const flags = mkdtempSync(join(tmpdir(), 'svc-e2e-gemini-flags-'))
  const repo = join(home, 'repo')
  let model: GeminiModelServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let token: string
  let agent: {id: string; workspace?: {path: string; branch: string}}
  const svc = (args: string[], opts: {cwd?: string} = {}) => runCli(args, {env, cwd: opts.cwd ?? repo, timeoutMs: 60_000})
  const pane = () => tmuxAt(tmuxDir, ['capture-pane', '-p', '-t', `=svc-${agent.id}:`]).stdout
  const get = async () => (await requestJson<any>('GET', `${server.url}/api/v1/agents/${agent.id}`, {token})).body.agent
  /** Polls the agent until `pred` holds; the failure names what was expected and shows the pane. */
  const until = async (what: string, pred: (a: any) => boolean) => {
    let last: any
    try {
      return await waitFor(async () => pred((last = await get())) && last, LONG, what)
    } catch (err) {
      throw new Error(`${(err as Error).message}; agent ${JSON.stringify({phase: last?.phase, activity: last?.activity, detail: last?.detail})}; pane:\n${pane()}`)
    }
  }
  /**
   * The usage the Hub holds for the agent once it counts `calls` model calls. The hook sends the
   * turn's usage with `idle`, or in a report of its own right after it when the session file is
   * late, so `idle` alone does not mean the usage has arrived; a usage that never gets there
   * fails the wait.
   */
  /** The scripted server's next matching request; the failure shows the pane (what the CLI did with the input). */
  const nextChat = async (before: number, what: string) => {
    try {
      return await model.waitForRequest((q) => q.kind === 'stream' && model.chats().indexOf(q) >= before, LONG, what)
    } catch (err) {
      throw new Error(`${(err as Error).message}; pane:\n${pane()}`)
    }
  }
  const hubUsage = async (calls: number) => (await until(`the Hub's agent record counting ${calls} model calls`, (a) => (a.usage?.modelCalls ?? 0) >= calls)).usage
  /** A shell command for the scripted model: writes a file, then runs until the test says so. */
  // The flag is a file in the agent's worktree: the sandbox gives the agent a private /tmp.
  const blockingCommand = (file: string, text: string, flag: string) => `echo ${text} > ${file}; while [ ! -e .svc-test-${flag} ]; do sleep 0.1; done`

  beforeAll(async () => {
    model = await startGeminiModelServer()
    mkdirSync(repo)
    const git = (...a: string[]) => execFileSync('git', a, {cwd: repo, env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e'}})
    git('init', '-q', '-b', 'main')
    writeFileSync(join(repo, 'README.md'), '# demo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    mkdirSync(join(home, '.svc'))
    // The built-in `gemini` config, pointed at the scripted server: only the model endpoint is fake.
    writeFileSync(
      join(home, '.svc', 'settings.yaml'),
      [
        'schema_version: "1"',
        'harness_configs:',
        '  gemini:',
        '    harness: gemini',
        '    model: gemini-2.5-flash',
        '    env:',
        `      GOOGLE_GEMINI_BASE_URL: ${model.url}`,
        `      GEMINI_API_KEY: ${FAKE_KEY}`,
        '',
      ].join('\n'),
    )
    const serverEnv = cliEnv(home, {
      PATH: `${BIN_DIR}${delimiter}${process.env.PATH}`,
      TMUX_TMPDIR: tmuxDir,
      SVC_SERVER_BROKER_PORT: String(await freePort()),
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      CONTAINER_HOST: 'unix:///nonexistent/podman.sock',
    })
    server = await startServerProcess([], serverEnv, 60_000)
    env = {...serverEnv, SVC_HUB_ENDPOINT: server.url}
    token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const reg = await svc(['project', 'register', '--json'])
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    await model?.close()
    for (const d of [home, tmuxDir, flags]) rmSync(d, {recursive: true, force: true})
  })

  it('svc agent create fix --harness gemini starts Gemini CLI in its own worktree on svc/fix, thinking on its task', async () => {
    model.enqueue({shell: blockingCommand('gemini-made.txt', 'one', 'go1'), description: 'write the file', hold: true}, {text: 'Created gemini-made.txt.'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'gemini', 'create gemini-made.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    expect(agent.workspace).toMatchObject({branch: 'svc/fix'})
    expect(agent.workspace!.path).not.toBe(repo)

    // The model holds its answer: the CLI reached the model with the task as its prompt.
    const held = await model.waitForHeld(LONG)
    expect(held.lastUserText).toContain('create gemini-made.txt')
    expect(held.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse')
    expect(held.headers['x-goog-api-key']).toBe(FAKE_KEY)
    await until('activity thinking while the model holds its answer', (a) => a.activity === 'thinking')
  })

  it('never stopped at a first-run dialog: the pane shows the prompt UI, no trust, auth or theme question', async () => {
    const text = pane()
    expect(text).toContain('Type your message')
    expect(text).not.toMatch(/Do you trust|trust this folder|Choose an authentication|Select Theme|Get started|Allow Gemini CLI/i)
    // Nothing but the model server was asked for anything: no update or telemetry traffic reached it either.
    expect(model.requests.every((q) => q.kind === 'stream' || q.kind === 'generate' || q.kind === 'count')).toBe(true)
  })

  it('asks before its shell command (waiting_for_input), runs it once allowed, and goes idle after the turn', async () => {
    model.release()
    const waiting = await until('waiting_for_input at the confirmation', (a) => a.activity === 'waiting_for_input')
    expect(waiting.detail).toContain('echo one > gemini-made.txt')
    expect(existsSync(join(agent.workspace!.path, 'gemini-made.txt'))).toBe(false)
    // The hook reports before the dialog is drawn: answer it once it is on the screen. "2": allow
    // this command for the rest of the session (the next one then runs unasked).
    await waitFor(() => /Allow execution/.test(pane()), LONG, 'the confirmation dialog on the screen')
    const keys = await svc(['keys', 'fix', '2', '--json'])
    expect(keys.code, keys.stderr + keys.stdout).toBe(0)
    await waitFor(() => existsSync(join(agent.workspace!.path, 'gemini-made.txt')), LONG, 'the tool writes gemini-made.txt in the worktree')
    writeFileSync(join(agent.workspace!.path, '.svc-test-go1'), '')
    const idle = await until('idle after the turn', (a) => a.activity === 'idle')
    // The turn's end belongs to no tool: the command's detail is gone.
    expect(idle.detail).toBe('')
    // The turn counted; its usage reached the Hub (read by `svc hook` from the real CLI's session
    // file): two model calls (the tool call, the answer) of the scripted server's 120 + 8 tokens,
    // in one session, priced from the table by the model the CLI recorded.
    expect(idle.turns).toBe(1)
    const usage = await hubUsage(2)
    expect(usage).toMatchObject({inputTokens: 240, outputTokens: 16, cacheReadTokens: 0, modelCalls: 2})
    expect(Object.values(usage.sessions)).toEqual([expect.objectContaining({inputTokens: 240, outputTokens: 16, modelCalls: 2, model: 'gemini-2.5-flash', costFrom: 'price_table'})])
    expect(usage.costUsd).toBeGreaterThan(0)
    expect(readFileSync(join(agent.workspace!.path, 'gemini-made.txt'), 'utf8')).toBe('one\n')
    // On the agent's branch, in its own worktree: the checkout itself is untouched.
    expect(execFileSync('git', ['branch', '--show-current'], {cwd: agent.workspace!.path, encoding: 'utf8'}).trim()).toBe('svc/fix')
    expect(existsSync(join(repo, 'gemini-made.txt'))).toBe(false)
    // The tool's result went back to the model.
    expect(model.chats().some((c) => c.isToolResult)).toBe(true)
  })

  it('svc message reaches Gemini CLI as its next prompt; the tool it runs shows as executing with its name', async () => {
    model.enqueue({shell: blockingCommand('second.txt', 'two', 'go2'), description: 'write the second file'}, {text: 'Done again.'})
    const before = model.chats().length
    const m = await svc(['message', 'fix', 'next: write second.txt', '--json'])
    expect(m.code, m.stderr + m.stdout).toBe(0)
    const next = await nextChat(before, 'the next chat request')
    expect(next.lastUserText).toContain('next: write second.txt')
    const running = await until('executing while the tool runs', (a) => a.activity === 'executing')
    expect(running.detail).toMatch(/^run_shell_command: echo two > second\.txt/)
    writeFileSync(join(agent.workspace!.path, '.svc-test-go2'), '')
    const idle = await until('idle after the second turn', (a) => a.activity === 'idle')
    expect(existsSync(join(agent.workspace!.path, 'second.txt'))).toBe(true)
    expect(idle.turns).toBe(2)
    // Cumulative over the session: the second turn's two calls added to the first's, still one session.
    const usage = await hubUsage(4)
    expect(usage).toMatchObject({inputTokens: 480, outputTokens: 32, modelCalls: 4})
    expect(Object.keys(usage.sessions)).toHaveLength(1)
  })

  it('svc agent restart resumes its Gemini CLI session (--resume latest): the next prompt carries the history', async () => {
    const before = model.chats().length
    const r = await svc(['agent', 'restart', 'fix', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    // A message goes in once the resumed CLI shows its prompt again (it shows the old turns too).
    await waitFor(() => /Type your message/.test(pane()) && /Done again/.test(pane()), LONG, 'the resumed session on the screen')
    model.enqueue({text: 'Resumed.'})
    const m = await svc(['message', 'fix', 'after the restart', '--json'])
    expect(m.code, m.stderr + m.stdout).toBe(0)
    const next = await nextChat(before, 'a chat request after the restart')
    expect(next.lastUserText).toContain('after the restart')
    const history = JSON.stringify(next.body.contents)
    expect(history).toContain('create gemini-made.txt')
    expect(history).toContain('next: write second.txt')
    await until('idle after the resumed turn', (a) => a.activity === 'idle' && a.turns === 3)
  })

  // One retry: on an overloaded machine Gemini CLI can kill the AfterAgent hook at its own 15 s
  // hook timeout, and that turn's report is then lost (kept reports cover a Hub away, not a hook
  // that never finished); seen once
  // in a full CI run beside the rest of the suite, never alone beside two busy loops.
  it('a turn that ends on an API error: idle with the error Gemini CLI showed as detail and error; the next turn that works clears it', {retry: 1}, async () => {
    // Gemini CLI fires no hook of its own for it: AfterAgent with no response text, and the
    // error in its session file (gemini.ts, geminiHookError).
    model.enqueue({error: 400, message: 'scripted refusal: this model does not take that request'})
    const m = await svc(['message', 'fix', 'this one fails', '--json'])
    expect(m.code, m.stderr + m.stdout).toBe(0)
    const failed = await until('idle with the error', (a) => a.activity === 'idle' && !!a.error)
    expect(failed.error).toMatch(/scripted refusal: this model does not take that request/)
    expect(failed.detail).toBe(failed.error)
    model.enqueue({text: 'Fine now.'})
    const again = await svc(['message', 'fix', 'try again', '--json'])
    expect(again.code, again.stderr + again.stdout).toBe(0)
    await until('idle with the error cleared', (a) => a.activity === 'idle' && a.error === null && a.detail === '')
  })
})
