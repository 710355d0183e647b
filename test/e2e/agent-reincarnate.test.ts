import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {tmuxAt} from '../helpers/live-hub.js'

/**
 * `svc agent reincarnate` with the real CLI against a real workstation Hub whose co-located
 * broker runs agents in tmux: the agent restarts in a new session, `--role` changes its role,
 * `--json` prints `{agent}`, and an unknown agent is a Hub failure (exit 1).
 */
describe('svc agent reincarnate against a workstation Hub', {timeout: 180_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-reinc-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-reinc-tmux-'))
  let env: NodeJS.ProcessEnv
  let server: RunningServer
  const svc = (args: string[]) => runCli(args, {env, timeoutMs: 60_000})

  beforeAll(async () => {
    ;({server, env} = await startLocalRuntimeServer(home, tmuxDir))
  })
  afterAll(async () => {
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('restarts the agent (JSON and human output) and changes its role with --role', async () => {
    const created = await svc(['agent', 'create', 'phoenix', '--harness', 'shell', '--json'])
    expect(created.code, created.stderr + created.stdout).toBe(0)
    const id = created.json.agent.id as string

    const r = await svc(['agent', 'reincarnate', 'phoenix', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    expect(r.json.agent).toMatchObject({id, name: 'phoenix', phase: 'running', role: 'full'})
    expect(tmuxAt(tmuxDir, ['has-session', '-t', `=svc-${id}`]).code).toBe(0)

    const human = await svc(['agent', 'reincarnate', 'phoenix', '--role', 'baseline'])
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/^Agent phoenix reincarnated\.\n/)
    const got = await svc(['agent', 'get', 'phoenix', '--json'])
    expect(got.json.agent).toMatchObject({role: 'baseline', phase: 'running'})
  })

  it('refuses an unknown role before any request (exit 2) and reports an unknown agent (exit 1)', async () => {
    expect((await svc(['agent', 'reincarnate', 'phoenix', '--role', 'root', '--json'])).code).toBe(2)
    const missing = await svc(['agent', 'reincarnate', 'nobody', '--json'])
    expect(missing.code).toBe(1)
    expect(missing.json.error.code).toBe('not_found')
  })
})
