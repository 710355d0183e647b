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
 * The whole path: a real Hub with its co-located broker (local tmux runtime), a registered git
 * checkout, `svc agent create fix --harness opencode "<task>"`, the real OpenCode TUI against the
 * scripted Chat Completions server (a custom `@ai-sdk/openai-compatible` provider given through
 * the config's env `OPENCODE_CONFIG_CONTENT`), its svc plugin running `svc hook opencode <event>`
 * into the Hub. OpenCode starts slowly on a loaded machine (a 185 MB Bun binary): waits are long.
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
  const pane = () => tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout
  const svc = (args: string[]) => runCli(args, {env, cwd: checkout, timeoutMs: 60_000})
  const getAgent = async () => {
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const res = await fetch(`${server.url}/api/v1/agents/${agent.id}`, {headers: {authorization: `Bearer ${token}`}})
    return ((await res.json()) as {agent: Record<string, any>}).agent
  }
  /** The tail of OpenCode's own log in the agent's HOME: what it did when a wait times out. */
  const openCodeLog = () => {
    const dir = join(home, '.svc', 'broker', 'homes', agent.id, '.local', 'share', 'opencode', 'log')
    const files = existsSync(dir) ? readdirSync(dir).sort() : []
    return files.length ? readFileSync(join(dir, files.at(-1)!), 'utf8').split('\n').slice(-40).join('\n') : `(no log in ${dir})`
  }
  const seen: string[] = []
  const waitActivity = (want: (a: Record<string, any>) => boolean, what: string, timeoutMs = 120_000) =>
    waitFor(
      async () => {
        const a = await getAgent()
        const key = `${a.activity}${a.detail ? ` (${a.detail})` : ''}`
        if (seen.at(-1) !== key) seen.push(key)
        return want(a) ? a : null
      },
      timeoutMs,
      `${what} (activities seen: ${seen.join(' -> ')}; model turns: ${model.turns().length}; pane:\n${agent ? pane() : ''}\nOpenCode's log:\n${agent ? openCodeLog() : ''})`,
    )

  beforeAll(async () => {
    model = await startChatModelServer()
    mkdirSync(join(home, '.svc'), {recursive: true})
    // Only the model endpoint is fake: a custom provider pointing at it, and a key for the
    // harness's ANTHROPIC_API_KEY need (never sent anywhere: the model is the scripted one).
    const provider = {
      model: 'scripted/m1',
      provider: {scripted: {npm: '@ai-sdk/openai-compatible', name: 'Scripted', options: {baseURL: model.baseURL, apiKey: 'sk-test'}, models: {m1: {name: 'M1'}}}},
    }
    writeFileSync(
      join(home, '.svc', 'settings.yaml'),
      `schema_version: "1"\nharness_configs:\n  opencode:\n    harness: opencode\n    env:\n      OPENCODE_CONFIG_CONTENT: ${JSON.stringify(JSON.stringify(provider))}\n      ANTHROPIC_API_KEY: sk-test-not-a-real-key\n`,
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
    model.push({tool: 'bash', args: {command: 'echo from-opencode > hub-marker.txt; sleep 3', description: 'write the marker'}, hold: held.promise}, {text: 'I wrote hub-marker.txt'})
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

  it('executing with the tool while it runs, its file in the worktree on svc/fix, idle after the turn', async () => {
    held.release()
    const running = await waitActivity((a) => a.activity === 'executing', 'executing while the tool runs')
    expect(running.detail).toBe('bash: echo from-opencode > hub-marker.txt; sleep 3')
    // A liveness bound, not a target: in two full-suite runs OpenCode's bash tool sat on this
    // three-second command until its own two-minute tool timeout (the agent then went idle and the
    // next test passed); alone, or beside the podman, sandbox, web and Claude tests, it takes
    // seconds. svc's promise is the idle report when the turn ends, however long the tool takes.
    const idle = await waitActivity((a) => a.activity === 'idle', 'idle after the turn', 240_000)
    expect(readFileSync(join(agent.workspace.path, 'hub-marker.txt'), 'utf8')).toBe('from-opencode\n')
    expect(git(agent.workspace.path, 'branch', '--show-current').trim()).toBe('svc/fix')
    expect(existsSync(join(checkout, 'hub-marker.txt'))).toBe(false)
    expect(idle.turns).toBe(1)
  })

  it('svc message reaches OpenCode as its next prompt', async () => {
    model.push({text: 'second answer'})
    const before = model.requests.length
    const r = await svc(['message', 'fix', 'next step please', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    await model.waitForRequest((q) => !q.side && lastUserText(q.body).includes('next step please'), 120_000, 'the message as the next prompt', before)
    await waitActivity((a) => a.activity === 'idle' && a.turns === 2, 'idle after the second turn')
  })
})
