import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'

/**
 * `svc agent logs` (issue 30 items 2 and 4) with the real CLI against a real workstation Hub
 * whose broker runs a `shell` agent in tmux: the screen text a terminal emulator makes of the
 * output (words placed by cursor moves come out spaced), `--raw` for the bytes, `--follow` into
 * a pipe as rendered lines, and a deleted agent's output by its ID.
 */
describe('svc agent logs against a workstation Hub', {timeout: 240_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-logs-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-logs-tmux-'))
  let env: NodeJS.ProcessEnv
  let server: RunningServer
  let agent: {id: string; name: string}
  const svc = (args: string[]) => runCli(args, {env, timeoutMs: 60_000})

  beforeAll(async () => {
    ;({server, env} = await startLocalRuntimeServer(home, tmuxDir))
    const r = await svc(['agent', 'create', 'printer', '--harness', 'shell', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('prints screen text (human and --json): words a program spaced with cursor moves read spaced; --raw gives the bytes', async () => {
    // What Claude Code does: words placed by "cursor forward", a spinner redrawn in place.
    expect((await svc(['keys', agent.id, "printf 'Do\\033[1Cyou\\033[1Cwant\\033[1Cto\\033[1Cproceed?\\n|\\r/\\r-\\rspun\\n'\r"])).code).toBe(0)
    await waitFor(async () => (await svc(['agent', 'logs', 'printer', '--json'])).json?.logs?.includes('spun'), 20_000, 'the output in the logs')
    const json = (await svc(['agent', 'logs', 'printer', '--json'])).json.logs as string
    expect(json).toMatch(/^Do you want to proceed\?$/m)
    expect(json).toMatch(/^spun$/m)
    expect(json).not.toMatch(/\x1b|Doyouwant/)
    const human = await svc(['agent', 'logs', 'printer'])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^Do you want to proceed\?$/m)
    const raw = await svc(['agent', 'logs', 'printer', '--raw'])
    expect(raw.code).toBe(0)
    expect(raw.stdout).toContain('Do\x1b[1Cyou')
  })

  it('--follow into a pipe prints rendered lines, the screen when the stream ends (the agent stops)', async () => {
    const child = spawn(process.execPath, [BIN, 'agent', 'logs', 'printer', '--follow'], {env, stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (err += d))
    const exited = new Promise<number | null>((r) => child.on('exit', r))
    expect((await svc(['keys', agent.id, "printf 'follow\\033[1Cme\\n'; seq 1 80\r"])).code).toBe(0)
    // Lines that scrolled off the agent's 50-row screen are final: the follower prints them as
    // they come (so it is connected).
    await waitFor(() => /^10$/m.test(out), 20_000, 'scrolled-off lines from the follower')
    expect(out).toMatch(/^follow me$/m)
    // Stopping the agent ends the stream: the follower prints what its screen holds and exits.
    expect((await svc(['agent', 'stop', 'printer', '--json'])).code).toBe(0)
    expect(await exited, err).toBe(0)
    expect(out).toMatch(/^Do you want to proceed\?$/m)
    expect(out).toMatch(/^80$/m)
    // Each line once.
    expect(out.match(/^follow me$/gm)).toHaveLength(1)
    expect(out).not.toMatch(/\x1b/)
  })

  it('a deleted agent: its output by ID as delete promised; its name is free and not_found', async () => {
    const del = await svc(['agent', 'delete', 'printer', '--json'])
    expect(del.code, del.stderr + del.stdout).toBe(0)
    const byId = await svc(['agent', 'logs', agent.id, '--json'])
    expect(byId.code, byId.stderr + byId.stdout).toBe(0)
    expect(byId.json.logs).toMatch(/^Do you want to proceed\?$/m)
    const human = await svc(['agent', 'logs', agent.id])
    expect(human.stdout).toContain('follow me')
    const byName = await svc(['agent', 'logs', 'printer', '--json'])
    expect(byName.code).toBe(1)
    expect(byName.json.error.code).toBe('not_found')
  })
})
