import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startResponsesServer, toolOutputs, type ResponsesServer} from '../helpers/model-servers/openai-responses.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
/** A command the model asks to run outside Codex's sandbox: under `on-request`, Codex asks first. */
const escalated = (cmd: string) => ({call: 'exec_command', arguments: {cmd, yield_time_ms: 10_000, sandbox_permissions: 'require_escalated', justification: `run ${cmd}`}})
const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {cwd, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

/**
 * Issue 28 for Codex: a real `svc server start` whose co-located broker runs the real `codex`
 * CLI (scripted Responses model). The harness config opts into Codex's `on-request` approval
 * policy with its workspace-write sandbox (`args: [-a, on-request, -s, workspace-write]`; svc's
 * own default is `never`, and Codex 0.169 has no `untrusted` policy any more), and the model asks
 * to run a command outside that sandbox (`sandbox_permissions: require_escalated`), so Codex asks
 * first. Its PermissionRequest hook turns the ask into an approval: `svc agent approve` lets
 * the command run, `--deny --reason` refuses it and the model reads the reason in the tool's output.
 */
describe('approvals with the codex harness', {timeout: 600_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-approvals-codex-'))
  const tmuxDir = join(home, 'tmux')
  const checkout = join(home, 'checkout')
  let model: ResponsesServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let token: string
  let agent: {id: string; workspace: {path: string}}
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const pane = () => tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout
  const svc = (args: string[]) => runCli(args, {env, cwd: checkout, timeoutMs: 90_000})
  const api = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, {headers: {authorization: `Bearer ${token}`}})
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }
  const until = async <T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 120_000): Promise<T> => {
    try {
      return await waitFor(read, timeoutMs, what)
    } catch (err) {
      const seen = JSON.stringify((await api(`/api/v1/agents/${agent.id}`).catch(() => null))?.agent, null, 1)
      const approvals = JSON.stringify((await api(`/api/v1/agents/${agent.id}/approvals`).catch(() => null))?.approvals)
      throw new Error(`${(err as Error).message}\nagent: ${seen}\napprovals: ${approvals}\npane:\n${pane()}`)
    }
  }
  const pending = () => until(async () => (await api(`/api/v1/agents/${agent.id}/approvals?state=pending`)).approvals[0], 'a pending approval')
  const idleAfter = (turns: number) =>
    until(async () => {
      const a = (await api(`/api/v1/agents/${agent.id}`)).agent
      return a.activity === 'idle' && a.turns >= turns ? a : undefined
    }, `idle after turn ${turns}`)

  beforeAll(async () => {
    model = await startResponsesServer()
    mkdirSync(join(home, '.svc'), {recursive: true})
    mkdirSync(tmuxDir)
    writeFileSync(
      join(home, '.svc', 'settings.yaml'),
      `schema_version: "1"\nharness_configs:\n  codex:\n    harness: codex\n    model: gpt-5.1-codex\n    args: [-a, on-request, -s, workspace-write]\n    env:\n      OPENAI_BASE_URL: ${model.baseUrl}\n      OPENAI_API_KEY: sk-test-not-a-real-key\n`,
    )
    mkdirSync(checkout)
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    writeFileSync(join(checkout, '.gitignore'), '.svc/\n')
    git(checkout, 'add', '-A')
    git(checkout, 'commit', '-q', '-m', 'init')
    ;({server, env} = await startLocalRuntimeServer(home, tmuxDir))
    env = {...env, PATH: `${BIN_DIR}:${env.PATH}`}
    token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const reg = await svc(['project', 'register', 'demo', '--no-remote', '--json'])
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
  })
  afterAll(async () => {
    const pids = tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout.split('\n').filter(Boolean)
    await server?.stop()
    tmux('kill-server')
    await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
    await model?.close()
    rmSync(home, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
  })

  it('svc agent approve lets the command run, through the PermissionRequest hook', async () => {
    model.enqueue(escalated('echo one > one.txt'), {text: 'Wrote one.txt.'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'codex', 'write one into one.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    const asked = await pending()
    expect(asked).toMatchObject({agentId: agent.id, tool: 'Bash', summary: 'echo one > one.txt', state: 'pending'})
    expect((await api(`/api/v1/agents/${agent.id}`)).agent.activity).toBe('waiting_for_input')
    // The command waits for the decision: nothing ran yet.
    expect(existsSync(join(agent.workspace.path, 'one.txt'))).toBe(false)
    const ok = await svc(['agent', 'approve', 'fix', '--json'])
    expect(ok.code, ok.stderr + ok.stdout).toBe(0)
    expect(ok.json.approval).toMatchObject({id: asked.id, state: 'allowed', decidedBy: {kind: 'user'}})
    await idleAfter(1)
    expect(readFileSync(join(agent.workspace.path, 'one.txt'), 'utf8')).toBe('one\n')
  })

  it('svc agent approve --deny --reason refuses it; the model reads the reason in the tool output', async () => {
    model.enqueue(escalated('echo two > two.txt'), {text: 'Not writing two.txt.'})
    const before = model.requests.length
    expect((await svc(['message', 'fix', 'now write two into two.txt'])).code).toBe(0)
    const asked = await pending()
    expect(asked.summary).toBe('echo two > two.txt')
    const no = await svc(['agent', 'approve', 'fix', '--deny', '--reason', 'not on a Friday', '--json'])
    expect(no.code, no.stderr + no.stdout).toBe(0)
    expect(no.json.approval).toMatchObject({id: asked.id, state: 'denied', reason: 'not on a Friday'})
    const result = await model.waitForRequest((q) => toolOutputs(q.body).some((o) => o.includes('not on a Friday')), 120_000, 'the deny reason in the tool output', before)
    expect(toolOutputs(result.body).join('\n')).toContain('Denied by the user (through svc): not on a Friday')
    await idleAfter(2)
    expect(existsSync(join(agent.workspace.path, 'two.txt'))).toBe(false)
  })
})
