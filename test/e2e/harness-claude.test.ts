import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startAnthropicServer, userText, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const KEY = 'sk-ant-e2e-key-for-the-scripted-server-0123456789'

/**
 * Done-when of the real-agents issue for Claude Code: a real `svc server start` (SQLite) whose
 * co-located broker runs the real `claude` CLI in tmux, in a git worktree of a registered
 * checkout; only the model endpoint is fake (the scripted Anthropic server). The agent is watched
 * through GET /api/v1/agents/:id, as a client would.
 */
describe('svc agent with the claude harness on a workstation Hub', {timeout: 300_000}, () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-e2e-claude-'))
  const home = join(root, 'home')
  const tmuxDir = join(root, 'tmux')
  const checkout = join(root, 'checkout')
  let model: AnthropicServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let token: string
  let agent: {id: string; workspace?: {path: string; branch: string}}
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const pane = () => tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout
  const svc = (args: string[], opts: {cwd?: string} = {}) => runCli(args, {env, cwd: opts.cwd ?? checkout, timeoutMs: 90_000})
  const git = (...args: string[]) => execFileSync('git', args, {cwd: checkout, encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com'}})
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
    for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d, {recursive: true})
    model = await startAnthropicServer()
    writeFileSync(join(home, '.svc', 'settings.yaml'), `schema_version: "1"\nharness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: ${KEY}\n`)
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const serverEnv = cliEnv(home, {
      PATH: `${BIN_DIR}:${process.env.PATH}`,
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
  })
  afterAll(async () => {
    const pids = tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout.split('\n').filter(Boolean)
    await server?.stop()
    tmux('kill-server')
    await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
    await model?.close()
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
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
    const waiting = await agentUntil((a) => a.activity === 'waiting_for_input', 'waiting_for_input at the permission prompt')
    expect(waiting.detail).toContain('echo hello > hello.txt')
    expect(pane()).toMatch(/Do you want to proceed\?/)
    const keys = await svc(['keys', 'fix', 'Enter', '--json'])
    expect(keys.code, keys.stderr + keys.stdout).toBe(0)

    const idle = await agentUntil((a) => a.activity === 'idle', 'idle after the turn')
    // One turn ended (counted for max_turns).
    expect(idle.turns).toBe(1)
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
    expect(pane()).toMatch(/Second turn done/)
  })
})
