import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, freePort, runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {agentProcessEnv, tmuxAt, waitFor} from '../helpers/live-hub.js'

/**
 * CLI gaps a new user met (issue 22), with the real CLI against a real workstation `svc server
 * start` whose co-located broker runs agents in tmux: agent IDs across projects, commands whose
 * effect did not happen exit non-zero, a malformed checkout settings file is reported, logs
 * without terminal escapes, attach on a 0x0 terminal, and finding a Hub on another port.
 */
describe('CLI hardening against a workstation Hub', {timeout: 240_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-hard-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-hard-tmux-'))
  let serverEnv: NodeJS.ProcessEnv
  let env: NodeJS.ProcessEnv
  let server: RunningServer
  let far: {id: string; name: string; projectId: string}
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const svc = (args: string[], opts: {extra?: Record<string, string>; cwd?: string; env?: NodeJS.ProcessEnv} = {}) =>
    runCli(args, {env: {...(opts.env ?? env), ...opts.extra}, cwd: opts.cwd, timeoutMs: 60_000})
  const pane = (id: string) => tmux('capture-pane', '-p', '-t', `=svc-${id}:`).stdout

  beforeAll(async () => {
    ;({server, serverEnv, env} = await startLocalRuntimeServer(home, tmuxDir))
    const reg = await svc(['project', 'register', 'elsewhere', '--no-remote', '--json'])
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
    const r = await svc(['agent', 'create', 'far', '--harness', 'shell', '--project', 'elsewhere', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    far = r.json.agent
    expect(far.projectId).toBe(reg.json.project.id)
    await waitFor(() => pane(far.id).trim().length > 0, 15_000, 'a shell prompt')
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
    tmux('kill-server')
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('every agent command takes an agent ID whatever the current project; a name is looked up in the current project', async () => {
    expect((await svc(['keys', far.id, 'echo far-$((6*7))'])).code).toBe(0)
    const enter = await svc(['keys', far.id, 'Enter', '--json'])
    expect(enter.code, enter.stdout + enter.stderr).toBe(0)
    await waitFor(() => /^far-42$/m.test(pane(far.id)), 10_000, 'the keys ran')
    const msg = await svc(['message', far.id, 'echo via-id-message', '--json'])
    expect(msg.code, msg.stdout + msg.stderr).toBe(0)
    await waitFor(() => /^via-id-message$/m.test(pane(far.id)), 10_000, 'the message ran')
    const got = await svc(['agent', 'get', far.id, '--json'])
    expect(got.code, got.stdout + got.stderr).toBe(0)
    expect(got.json.agent).toMatchObject({id: far.id, name: 'far'})
    const logs = await svc(['agent', 'logs', far.id, '--json'])
    expect(logs.code, logs.stdout + logs.stderr).toBe(0)
    expect(logs.json.logs).toContain('far-42')
    for (const action of ['stop', 'start', 'restart']) {
      const r = await svc(['agent', action, far.id, '--json'])
      expect(r.code, `${action}: ${r.stdout}${r.stderr}`).toBe(0)
      expect(r.json.agent.id).toBe(far.id)
    }
    const re = await svc(['agent', 'reincarnate', far.id, '--json'])
    expect(re.code, re.stdout + re.stderr).toBe(0)
    // A name is looked up in the current project (here the default one), not everywhere.
    const byName = await svc(['agent', 'get', 'far', '--json'])
    expect(byName.code).toBe(1)
    expect(byName.json.error.code).toBe('not_found')
    expect((await svc(['agent', 'get', 'far', '--project', 'elsewhere', '--json'])).json.agent.id).toBe(far.id)
  })

  it('inside an agent, svc project get reads its own project with the agent token', async () => {
    const own = agentProcessEnv(tmuxDir, far.id)
    const inside = {...env, SVC_AUTH_TOKEN: own.SVC_AUTH_TOKEN, SVC_AGENT_ID: own.SVC_AGENT_ID, SVC_PROJECT_ID: own.SVC_PROJECT_ID}
    const r = await svc(['project', 'get', '--json'], {env: inside})
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json.project.id).toBe(far.projectId)
    const other = await svc(['project', 'get', 'default', '--json'], {env: inside})
    expect(other.code).toBe(1)
    expect(other.json.error.code).toBe('not_found')
  })

  it('agent logs strips terminal escape sequences, in human and --json output', async () => {
    await waitFor(() => pane(far.id).trim().length > 0, 15_000, 'a shell prompt after the restarts')
    expect((await svc(['keys', far.id, "printf '\\033[31mRED-%s\\033[0m \\033]0;title\\007done\\n' text"])).code).toBe(0)
    expect((await svc(['keys', far.id, 'Enter'])).code).toBe(0)
    await waitFor(() => /RED-text done/.test(pane(far.id)), 10_000, 'the coloured line')
    const json = await svc(['agent', 'logs', far.id, '--json'])
    expect(json.code).toBe(0)
    expect(json.json.logs).toContain('RED-text done')
    expect(json.json.logs).not.toMatch(/\x1b/)
    const human = await svc(['agent', 'logs', far.id])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain('RED-text done')
    expect(human.stdout).not.toMatch(/\x1b/)
  })

  it('agent attach on a 0x0 terminal uses a default size', async () => {
    // `script` gives the CLI a pseudo-terminal; with no terminal of its own that one is 0x0.
    const cmd = `${process.execPath} ${BIN} agent attach ${far.id}`
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], {env, stdio: ['pipe', 'pipe', 'pipe']})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    await waitFor(() => out.includes('[attached') || out.includes('rror'), 30_000, 'attach to open')
    expect(out).toContain('[attached')
    child.stdin.write('\x1d')
    const code = await new Promise<number | null>((r) => child.on('close', r))
    expect(out).not.toContain('validation_error')
    expect(out).toContain('[detached]')
    expect(code).toBe(0)
  })

  it('agent list --project <unknown> exits 1 not_found; settings get <unknown key> exits non-zero', async () => {
    const list = await svc(['agent', 'list', '--project', 'typo', '--json'])
    expect(list.code).toBe(1)
    expect(list.json.error.code).toBe('not_found')
    const human = await svc(['agent', 'list', '--project', 'typo'])
    expect(human.code).toBe(1)
    expect(human.stdout).not.toContain('No agents')
    expect(human.stderr).toMatch(/project not found/)
    const known = await svc(['settings', 'get', 'quotas.enforce_broker_quotas'])
    expect(known).toMatchObject({code: 0, stdout: 'true\n'})
    const unknown = await svc(['settings', 'get', 'quotas.no_such_key', '--json'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.json.error.message).toContain('quotas.no_such_key')
    const unknownHuman = await svc(['settings', 'get', 'nothing.here'])
    expect(unknownHuman.code).not.toBe(0)
    expect(unknownHuman.stderr).toMatch(/unknown setting "nothing\.here"/)
  })

  it('a malformed <checkout>/.svc/settings.yaml is reported with file:line by every command that reads it', async () => {
    const checkout = join(home, 'work', 'broken')
    mkdirSync(join(checkout, '.svc'), {recursive: true})
    const file = join(checkout, '.svc', 'settings.yaml')
    writeFileSync(file, 'schema_version: "1"\nhub:\n  grove_id: [unclosed\n')
    for (const args of [['agent', 'list'], ['project', 'get'], ['config', 'get', 'hub.grove_id'], ['whoami']]) {
      const r = await svc([...args, '--json'], {cwd: checkout})
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.json.error.code, args.join(' ')).toBe('config_invalid')
      expect(r.json.error.message, args.join(' ')).toMatch(new RegExp(`${file.replace(/[.]/g, '\\.')}:\\d+`))
      const human = await svc(args, {cwd: checkout})
      expect(human.code).toBe(2)
      expect(human.stderr).toContain(`${file}:`)
    }
    // `svc config validate` still runs, to say what is wrong.
    const v = await svc(['config', 'validate', '--json'], {cwd: checkout})
    expect(v.json.valid).toBe(false)
  })

  it('finds a Hub started on another port through the record in ~/.svc; hub_unreachable says how to point elsewhere; a clean stop removes the record', async () => {
    const bare = {...serverEnv}
    delete bare.SVC_HUB_ENDPOINT
    const found = await svc(['agent', 'get', far.id, '--json'], {env: bare})
    expect(found.code, found.stdout + found.stderr).toBe(0)
    const nowhere = `http://127.0.0.1:${await freePort()}`
    const r = await svc(['agent', 'list', '--json'], {env: bare, extra: {SVC_HUB_ENDPOINT: nowhere}})
    expect(r.code).toBe(3)
    expect(r.json.error.code).toBe('hub_unreachable')
    expect(r.json.error.message).toContain('--hub')
    expect(r.json.error.message).toContain('SVC_HUB_ENDPOINT')
    const flag = await svc(['agent', 'list', '--hub', nowhere, '--json'], {env: bare})
    expect(flag.code).toBe(3)

    const record = join(home, '.svc', 'hub.json')
    expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({url: server.url, pid: server.child.pid})
    expect(await server.stop()).toBe(0)
    expect(existsSync(record)).toBe(false)
    // A stale record (its process is gone) is ignored: the default endpoint is tried, and fails.
    writeFileSync(record, JSON.stringify({url: server.url, pid: 2 ** 22 + 12345}))
    const stale = await svc(['agent', 'list', '--json'], {env: bare})
    expect(stale.code).not.toBe(0)
    expect(stale.stdout + stale.stderr).not.toContain(server.url)
  })
})
