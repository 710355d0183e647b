import {execFileSync, spawn} from 'node:child_process'
import {mkdtempSync, rmSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {BIN, cliEnv, runCli} from '../helpers/cli.js'
import {makeRepos, sh, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * `svc agent create`'s promises of CONTRACT.md and docs/cli.md that only its exit code and
 * envelope show: an agent created but not started is exit 1 `agent_failed` with the agent in
 * `details.agent`; a needed secret nobody set is exit 1 `missing_secrets` without a terminal;
 * `--secret KEY=VALUE` stores it first; a malformed `--secret` changes nothing.
 *
 * The co-located broker's runtime PATH holds only tmux and git: no bwrap, so the local runtime's
 * sandbox cannot start an agent after its worktree was made.
 */
describe('svc agent create: failures, secrets and exit codes', {timeout: 180_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  let projectId: string
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-create-'))
  const bin = mkdtempSync(join(tmpdir(), 'svc-e2e-create-bin-'))
  let env: NodeJS.ProcessEnv
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 60_000})
  const agentNames = async () => (await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents.map((a: {name: string}) => a.name).sort()

  beforeAll(async () => {
    for (const tool of ['tmux', 'git']) symlinkSync(execFileSync('which', [tool], {encoding: 'utf8'}).trim(), join(bin, tool))
    hub = await startLiveHub('sqlite', {env: {PATH: bin}})
    repos = makeRepos()
    const project = (await hub.request('GET', '/api/v1/projects/default')).body.project
    projectId = project.id
    await hub.store.projects.update(projectId, {localPath: repos.checkout}, iso(new Date()))
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken})
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
    rmSync(home, {recursive: true, force: true})
    rmSync(bin, {recursive: true, force: true})
  })

  it('an agent created but not started exits 1 with agent_failed; details.agent is the agent, kept in phase error', async () => {
    const r = await svc('agent', 'create', 'broken', '--harness', 'shell', '--json')
    expect(r.code, r.stdout + r.stderr).toBe(1)
    expect(r.json.error.code).toBe('agent_failed')
    expect(r.json.error.details.agent).toMatchObject({name: 'broken', phase: 'error'})
    expect(r.json.error.message).toMatch(/^agent broken was created but did not start: .*bubblewrap/)

    const human = await svc('agent', 'create', 'broken-too', '--harness', 'shell')
    expect(human.code).toBe(1)
    expect(human.stdout).toBe('')
    expect(human.stderr).toMatch(/Error: agent broken-too was created but did not start: .*bwrap.*\(agent_failed\)/)

    // What the failed start made is gone again: no worktree, no branch in the checkout.
    expect(sh(repos.checkout, 'branch', '--list', 'svc/broken*')).toBe('')
    expect(sh(repos.checkout, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)

    const got = await svc('agent', 'get', 'broken', '--json')
    expect(got.code, got.stderr).toBe(0)
    expect(got.json.agent).toMatchObject({name: 'broken', phase: 'error'})
  })

  it('a reader that went away (| head) does not turn the answer into a crash: the exit code is the answer\'s', async () => {
    // No Hub on port 9: hub_unreachable is exit 3, written to a stdout whose reader is gone.
    const child = spawn(process.execPath, [BIN, 'agent', 'create', 'gone-reader', 'the task', '--json'], {env: {...env, SVC_HUB_ENDPOINT: 'http://127.0.0.1:9'}, stdio: ['ignore', 'pipe', 'pipe']})
    child.stdout.destroy()
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
    expect(code, stderr).toBe(3)
  })

  it('a needed secret nobody set: exit 1 missing_secrets naming it, with --json and without a terminal; nothing is created', async () => {
    const before = await agentNames()
    const json = await svc('agent', 'create', 'keyless', '--harness', 'claude', '--json')
    expect(json.code).toBe(1)
    expect(json.json.error.code).toBe('missing_secrets')
    expect(json.json.error.details.missing.map((m: {key: string}) => m.key)).toEqual(['ANTHROPIC_API_KEY'])
    // runCli's stdin is a pipe, not a terminal: no prompt, the same refusal.
    const piped = await svc('agent', 'create', 'keyless', '--harness', 'claude')
    expect(piped.code).toBe(1)
    expect(piped.stderr).toMatch(/ANTHROPIC_API_KEY.*\(missing_secrets\)/)
    expect(await agentNames()).toEqual(before)
  })

  it('--secret KEY=VALUE stores the secret as your own first; a malformed --secret is a usage error and stores nothing', async () => {
    const secrets = async () => (await hub.request('GET', `/api/v1/projects/${projectId}/secrets`)).body.secrets
    const before = await agentNames()
    const bad = await svc('agent', 'create', 'keyed', '--harness', 'claude', '--secret', 'ANTHROPIC_API_KEY', '--json')
    expect(bad.code).toBe(2)
    expect(bad.json.error).toMatchObject({code: 'usage_error', message: '--secret expects KEY=VALUE, not "ANTHROPIC_API_KEY"'})
    expect(await secrets()).toEqual([])

    expect(await agentNames()).toEqual(before)

    // With the key stored the create gets past missing_secrets: the agent is made and dispatched
    // (and then fails on this broker's missing sandbox, as in the first test).
    const r = await svc('agent', 'create', 'keyed', '--harness', 'claude', '--secret', 'ANTHROPIC_API_KEY=sk-test-key', '--json')
    expect(r.code).toBe(1)
    expect(r.json.error.code, r.json.error.message).toBe('agent_failed')
    expect(r.json.error.details.agent).toMatchObject({name: 'keyed', harnessConfig: 'claude'})
    const stored = await secrets()
    expect(stored).toHaveLength(1)
    expect(stored[0]).toMatchObject({key: 'ANTHROPIC_API_KEY', scope: 'user'})
    expect(JSON.stringify(stored)).not.toContain('sk-test-key')
  })

  it('on a terminal a needed secret is asked for (masked), stored as your own and the create goes on', async () => {
    const secrets = async () => (await hub.request('GET', `/api/v1/projects/${projectId}/secrets`)).body.secrets
    const q = (x: string) => `'${x.replace(/'/g, `'\\''`)}'`
    const argv = [process.execPath, BIN, 'agent', 'create', 'asked', '--harness', 'codex', '--project', projectId]
    // util-linux `script` runs the CLI on a pseudo-terminal and passes our stdin to it.
    const child = spawn('script', ['-qfec', argv.map(q).join(' '), '/dev/null'], {env, stdio: ['pipe', 'pipe', 'pipe']})
    let out = ''
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((r) => child.on('exit', r))
    await waitFor(() => /OPENAI_API_KEY/.test(out) && /\?/.test(out), 30_000, `the prompt; output:\n${out}`)
    child.stdin!.write('sk-typed-at-the-prompt\r')
    const code = await exited
    // Past missing_secrets: the agent is made and dispatched, then fails on this broker's
    // missing sandbox (as in the first test).
    expect(code, out).toBe(1)
    expect(out).toMatch(/agent asked was created but did not start.*\(agent_failed\)/)
    // The typed key was masked on the terminal, and stored as the user's own secret.
    expect(out).not.toContain('sk-typed-at-the-prompt')
    expect((await secrets()).filter((x: {key: string}) => x.key === 'OPENAI_API_KEY')).toMatchObject([{key: 'OPENAI_API_KEY', scope: 'user'}])
  })
})
