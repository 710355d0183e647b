import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'
import {BIN, cliEnv, freePort, runCli, startServerProcess, type CliResult, type RunningServer} from '../helpers/cli.js'

// Liveness limits only (a shared, loaded machine): each step spawns a Node process.
vi.setConfig({testTimeout: 180_000, hookTimeout: 120_000})

/** Stable text for snapshots: IDs, times, ports and secrets replaced by same-length placeholders. */
function normalise(text: string): string {
  const ids = new Map<string, string>()
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `00000000-0000-0000-0000-${String(ids.size + 1).padStart(12, '0')}`)
      return ids.get(id)!
    })
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '2000-01-01T00:00:00.000Z')
    .replace(/svc_(pat|ses|dev)_[0-9a-f]+/g, (m, kind) => `svc_${kind}_${'x'.repeat(m.length - 8)}`)
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
}

/** The JSON shape of a --json answer: every leaf replaced by its type. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : []
  if (v === null) return 'null'
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v as object).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, shape(x)]))
  return typeof v
}

/** --json printed exactly one JSON document on stdout. */
function oneDocument(r: CliResult): any {
  expect(r.stdout.trim().length).toBeGreaterThan(0)
  const doc = JSON.parse(r.stdout)
  expect(r.stdout.trimEnd()).toBe(JSON.stringify(doc, null, 2))
  return doc
}

/** Runs svc under a pseudo-terminal (util-linux `script`), feeding `input`. */
function runInTty(args: string[], env: NodeJS.ProcessEnv, input: string, cwd?: string): Promise<{code: number | null; output: string}> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {env, cwd, stdio: ['pipe', 'pipe', 'pipe']})
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({code, output})
    })
    // Answer once the prompt had time to appear.
    setTimeout(() => child.stdin.end(input), 1500)
  })
}

function freshHome(settings?: string): string {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-cli-'))
  if (settings !== undefined) {
    mkdirSync(join(home, '.svc'), {recursive: true})
    writeFileSync(join(home, '.svc', 'settings.yaml'), settings)
  }
  return home
}

describe('svc CLI against a workstation Hub', () => {
  const home = freshHome()
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  const svc = (args: string[], extra: Record<string, string> = {}) => runCli(args, {env: {...env, ...extra}, cwd: home, timeoutMs: 60_000})

  beforeAll(async () => {
    server = await startServerProcess([], cliEnv(home), 90_000)
    env = cliEnv(home, {SVC_HUB_ENDPOINT: server.url, OCLIF_COLUMNS: '80'})
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('whoami: human output and --json shape', async () => {
    const human = await svc(['whoami'])
    expect(human.code).toBe(0)
    expect(normalise(human.stdout)).toMatchSnapshot()
    const json = oneDocument(await svc(['whoami', '--json']))
    expect(json).toEqual({principal: {kind: 'user', id: 'dev-user', email: 'dev@localhost', displayName: 'Developer'}, credentialKind: 'dev', systemAdmin: true})
  })

  it('project register, list, get, delete', async () => {
    const reg = await svc(['project', 'register', 'Demo', '--remote', 'git@github.com:Acme/Demo.git', '--json'])
    expect(reg.code).toBe(0)
    const created = oneDocument(reg)
    expect(created).toMatchObject({created: true, project: {name: 'Demo', slug: 'demo', gitRemote: 'github.com/Acme/Demo', role: 'owner'}})
    expect(shape(created)).toMatchSnapshot('register --json shape')
    const id = created.project.id as string

    const linked = await svc(['project', 'register', 'Other', '--remote', 'https://github.com/Acme/Demo'])
    expect(linked.code).toBe(0)
    expect(normalise(linked.stdout)).toMatchSnapshot('register (link) human')

    const humanNew = await svc(['project', 'register', 'Second', '--no-remote'])
    expect(normalise(humanNew.stdout)).toMatchSnapshot('register human')

    const list = await svc(['project', 'list'])
    expect(list.code).toBe(0)
    expect(normalise(list.stdout)).toMatchSnapshot('list human')
    const listJson = oneDocument(await svc(['project', 'list', '--json']))
    expect(listJson.projects.map((p: {id: string}) => p.id)).toContain(id)
    expect(shape(listJson)).toMatchSnapshot('list --json shape')

    const get = await svc(['project', 'get', 'demo'])
    expect(get.code).toBe(0)
    expect(normalise(get.stdout)).toMatchSnapshot('get human')
    const getJson = oneDocument(await svc(['project', 'get', id, '--json']))
    expect(getJson.project).toMatchObject({id, stats: {members: 1}})
    expect(shape(getJson)).toMatchSnapshot('get --json shape')
    // The current project from SVC_HUB_GROVE_ID.
    expect(oneDocument(await svc(['project', 'get', '--json'], {SVC_HUB_GROVE_ID: id})).project.id).toBe(id)

    // Without --yes and without a TTY, delete needs a prompt it cannot show.
    const refused = await svc(['project', 'delete', id])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('interactive_required')
    expect(refused.stderr).toContain('--yes')
    const refusedJson = await svc(['project', 'delete', id, '--json'])
    expect(refusedJson.code).toBe(2)
    expect(oneDocument(refusedJson).error.code).toBe('interactive_required')
    expect((await svc(['project', 'get', id, '--json'])).code).toBe(0)

    const del = await svc(['project', 'delete', id, '--yes', '--json'])
    expect(del.code).toBe(0)
    expect(oneDocument(del).project.id).toBe(id)
    expect(shape(oneDocument(del))).toMatchSnapshot('delete --json shape')

    const gone = await svc(['project', 'get', id, '--json'])
    expect(gone.code).toBe(1)
    expect(oneDocument(gone).error).toMatchObject({code: 'not_found', details: {requestId: expect.stringMatching(/^req_/)}})
  })

  it('auth token create, then whoami with it reports user_access_token', async () => {
    const {project} = oneDocument(await svc(['project', 'register', 'tokens', '--no-remote', '--json']))
    const create = await svc(['auth', 'token', 'create', '--name', 'ci', '--project', 'tokens', '--permission', 'project.read', '--permission', 'agent.list', '--expires', '30d', '--json'])
    expect(create.code).toBe(0)
    const t = oneDocument(create)
    expect(t).toMatchObject({name: 'ci', projectId: project.id, permissions: ['agent.list', 'project.read'], status: 'active'})
    expect(t.token).toMatch(/^svc_pat_/)
    expect(shape(t)).toMatchSnapshot('token create --json shape')

    const me = await svc(['whoami', '--json'], {SVC_AUTH_TOKEN: t.token})
    expect(me.code).toBe(0)
    expect(oneDocument(me)).toMatchObject({credentialKind: 'user_access_token', principal: {id: 'dev-user'}, token: {id: t.id, projectId: project.id}})
    const meHuman = await svc(['whoami'], {SVC_AUTH_TOKEN: t.token})
    expect(normalise(meHuman.stdout)).toMatchSnapshot('whoami with a token')

    const list = oneDocument(await svc(['auth', 'token', 'list', '--json']))
    expect(list.tokens.map((x: {id: string}) => x.id)).toContain(t.id)
    expect(JSON.stringify(list)).not.toContain(t.token)
    expect(shape(list)).toMatchSnapshot('token list --json shape')

    const revoke = await svc(['auth', 'token', 'revoke', t.id, '--json'])
    expect(revoke.code).toBe(0)
    expect(shape(oneDocument(revoke))).toMatchSnapshot('token revoke --json shape')
    const after = await svc(['whoami', '--json'], {SVC_AUTH_TOKEN: t.token})
    expect(after.code).toBe(1)
    expect(oneDocument(after).error.code).toBe('unauthorized')
  })

  it('a missing required flag is a usage error: exit 2, one JSON document with --json', async () => {
    const r = await svc(['auth', 'token', 'create', '--project', 'x', '--json'])
    expect(r.code).toBe(2)
    expect(oneDocument(r).error.code).toBe('usage_error')
    expect(oneDocument(r).error.message).toMatch(/required flag name/)
  })

  it('under a terminal, delete asks; cli.interactive_disabled turns the prompt off', async () => {
    const {project} = oneDocument(await svc(['project', 'register', 'asked', '--no-remote', '--json']))
    const asked = await runInTty(['project', 'delete', project.id], env, 'n\n')
    expect(asked.output).toContain(`Delete project ${project.id}?`)
    expect(asked.output).toContain('not confirmed')
    expect(asked.code).toBe(2)
    expect((await svc(['project', 'get', project.id])).code).toBe(0)

    // The project settings file of the working directory turns prompts off.
    const checkout = freshHome()
    mkdirSync(join(checkout, '.svc'), {recursive: true})
    writeFileSync(join(checkout, '.svc', 'settings.yaml'), 'schema_version: "1"\ncli:\n  interactive_disabled: true\n')
    const disabled = await runInTty(['project', 'delete', project.id], env, 'y\n', checkout)
    expect(disabled.output).not.toContain('Delete project')
    expect(disabled.output).toContain('interactive_required')
    expect(disabled.code).toBe(2)
    expect((await svc(['project', 'get', project.id])).code).toBe(0)
  })
})

describe('svc CLI without a Hub', () => {
  const env = (home: string, extra: Record<string, string> = {}) => cliEnv(home, {OCLIF_COLUMNS: '80', ...extra})

  it('svc --version prints svc/<version> <platform> node-<version>', async () => {
    const r = await runCli(['--version'], {env: env(freshHome()), timeoutMs: 60_000})
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(`svc/0.1.0 ${process.platform}-${process.arch} node-${process.version}`)
  })

  it('an unknown command exits 2', async () => {
    const r = await runCli(['frobnicate'], {env: env(freshHome()), timeoutMs: 60_000})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('frobnicate')
    const j = await runCli(['frobnicate', '--json'], {env: env(freshHome()), timeoutMs: 60_000})
    expect(j.code).toBe(2)
    expect(oneDocument(j).error.code).toBe('usage_error')
  })

  it('an unreachable Hub exits 3 with hub_unreachable', async () => {
    const port = await freePort()
    const e = env(freshHome(), {SVC_HUB_ENDPOINT: `http://127.0.0.1:${port}`, SVC_DEV_TOKEN: 'svc_dev_' + 'a'.repeat(64)})
    const r = await runCli(['project', 'list'], {env: e, timeoutMs: 60_000})
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('hub_unreachable')
    const j = await runCli(['project', 'list', '--json'], {env: e, timeoutMs: 60_000})
    expect(j.code).toBe(3)
    expect(oneDocument(j).error).toMatchObject({code: 'hub_unreachable', details: {endpoint: `http://127.0.0.1:${port}`}})
  })

  it('no credential at all is not_signed_in, exit 1', async () => {
    const port = await freePort()
    const r = await runCli(['whoami', '--json'], {env: env(freshHome(), {SVC_HUB_ENDPOINT: `http://127.0.0.1:${port}`}), timeoutMs: 60_000})
    expect(r.code).toBe(1)
    expect(oneDocument(r).error.code).toBe('not_signed_in')
  })

  it('prints the usage hint after an error by default; cli.autohelp: false suppresses it', async () => {
    const withHint = await runCli(['project', 'get'], {env: env(freshHome()), timeoutMs: 60_000})
    expect(withHint.code).toBe(2)
    expect(withHint.stderr).toContain('Usage: svc project get [PROJECT] [flags]')
    expect(normalise(withHint.stderr)).toMatchSnapshot('usage error with autohelp')

    const quiet = await runCli(['project', 'get'], {env: env(freshHome('schema_version: "1"\ncli:\n  autohelp: false\n')), timeoutMs: 60_000})
    expect(quiet.code).toBe(2)
    expect(quiet.stderr).toContain('no project')
    expect(quiet.stderr).not.toContain('Usage:')

    // SVC_CLI_AUTOHELP overrides the file.
    const forced = await runCli(['project', 'get'], {env: env(freshHome('schema_version: "1"\ncli:\n  autohelp: false\n'), {SVC_CLI_AUTOHELP: 'true'}), timeoutMs: 60_000})
    expect(forced.stderr).toContain('Usage:')
    // Never with --json: stdout holds only the error document.
    const json = await runCli(['project', 'get', '--json'], {env: env(freshHome()), timeoutMs: 60_000})
    expect(oneDocument(json).error.code).toBe('usage_error')
    expect(json.stderr).not.toContain('Usage:')
  })
})
