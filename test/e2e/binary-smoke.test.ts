// Smoke test of the single executable (dist/svc, `npm run build:binary`): the file is copied
// ALONE into an empty directory and run with an empty HOME, so anything it still needed from the
// checkout (package.json, node_modules, dist/cli.js, the native addon) would fail here.
// The binary is built in beforeAll when it is missing or older than the sources (~30 s).
import {execFileSync, spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import S3rver from 's3rver'
import {freePort} from '../helpers/cli.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const DIST_SVC = join(ROOT, 'dist', 'svc')

/** Newest modification time under the paths the executable is built from. */
function newestSource(): number {
  let newest = 0
  const walk = (p: string) => {
    let st
    try {
      st = statSync(p)
    } catch {
      return
    }
    if (st.isDirectory()) {
      for (const e of readdirSync(p)) if (e !== 'node_modules' && !e.endsWith('.test.ts')) walk(join(p, e))
    } else newest = Math.max(newest, st.mtimeMs)
  }
  for (const p of ['src', 'commands', 'web', 'package.json', 'scripts/build-binary.mjs', 'scripts/web-assets.mjs']) walk(join(ROOT, p))
  return newest
}

function ensureBinary(): void {
  if (existsSync(DIST_SVC) && statSync(DIST_SVC).mtimeMs >= newestSource()) return
  // build-binary reads the command table from the dev build (npm test builds it first).
  const cli = join(ROOT, 'dist', 'cli.js')
  if (!existsSync(cli) || statSync(cli).mtimeMs < newestSource()) execFileSync(process.execPath, ['scripts/build.mjs'], {cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit']})
  execFileSync(process.execPath, ['scripts/build-binary.mjs'], {cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], env: {...process.env, NODE_EXTRA_CA_CERTS: ''}})
}

let work: string
let svc: string
let env: NodeJS.ProcessEnv
let hub: ChildProcess | undefined
let hubUrl: string
let s3: S3rver | undefined

function run(args: string[], extra: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(svc, args, {cwd: join(work, 'cwd'), env: {...env, ...extra}, encoding: 'utf8', timeout: 30_000})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

function runJson(args: string[]) {
  const r = run([...args, '--json'], {SVC_HUB_ENDPOINT: hubUrl})
  expect(r.code, r.stderr + r.stdout).toBe(0)
  return JSON.parse(r.stdout)
}

function get(url: string): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.setTimeout(2000, () => req.destroy(new Error('timeout')))
  })
}

/** Starts `svc server start` from the copied executable on free ports and waits for /healthz. */
async function startHub(args: string[], hubEnv: NodeJS.ProcessEnv) {
  const port = await freePort()
  const brokerPort = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(svc, [...args, '--port', String(port)], {cwd: join(work, 'cwd'), env: {...hubEnv, SVC_SERVER_BROKER_PORT: String(brokerPort)}, stdio: ['ignore', 'ignore', 'pipe']})
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  children.push(child)
  const deadline = Date.now() + 60_000
  let health: {status: number; body: string} | undefined
  while (!health) {
    if (child.exitCode !== null) throw new Error(`the Hub exited ${child.exitCode}: ${stderr}`)
    if (Date.now() > deadline) throw new Error(`no /healthz within 60 s: ${stderr}`)
    health = await get(`${url}/healthz`).catch(() => undefined)
    if (!health) await new Promise((r) => setTimeout(r, 100))
  }
  return {child, url, health, stderr: () => stderr}
}
const children: ChildProcess[] = []

beforeAll(() => {
  ensureBinary()
  work = mkdtempSync(join(tmpdir(), 'svc-binary-smoke-'))
  for (const d of ['bin', 'home', 'cwd', 'tmux']) mkdirSync(join(work, d))
  svc = join(work, 'bin', 'svc')
  copyFileSync(DIST_SVC, svc)
  execFileSync('chmod', ['755', svc])
  // The test names its runtime: what engines this machine has must not decide where agents run.
  env = {PATH: process.env.PATH, HOME: join(work, 'home'), TMUX_TMPDIR: join(work, 'tmux'), NO_COLOR: '1', LANG: 'C.UTF-8', SVC_SERVER_BROKER_RUNTIME: 'local'}
}, 300_000)

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null) continue
    child.kill('SIGTERM')
    await new Promise((r) => child.on('exit', r))
  }
  await s3?.close()
  if (work) {
    spawnSync('tmux', ['-L', 'svc', 'kill-server'], {env, stdio: 'ignore'})
    rmSync(work, {recursive: true, force: true})
  }
})

describe('the single executable, alone in an empty directory', () => {
  it('svc hook runs from its own small bundle: one status report, exit 0, nothing printed', async () => {
    const got: Array<{url: string; auth: string; body: unknown}> = []
    const receiver = http.createServer((req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        got.push({url: req.url ?? '', auth: req.headers.authorization ?? '', body: JSON.parse(body)})
        res.end('{}')
      })
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    try {
      const port = (receiver.address() as {port: number}).port
      // With SVC_SEA_CODE_CACHE_CHECK the loader says so whenever it compiles the CLI bundle: a
      // hook must not (it is the hot path), so nothing may be printed.
      const hookEnv = {...env, SVC_HUB_ENDPOINT: `http://127.0.0.1:${port}`, SVC_AUTH_TOKEN: 'svc_agt_smoke', SVC_AGENT_ID: 'agent-1', SVC_SEA_CODE_CACHE_CHECK: '1'}
      const child = spawn(svc, ['hook', 'claude', 'PreToolUse'], {cwd: join(work, 'cwd'), env: hookEnv, stdio: ['pipe', 'pipe', 'pipe']})
      let out = ''
      child.stdout!.on('data', (d) => (out += d))
      child.stderr!.on('data', (d) => (out += d))
      child.stdin!.end(JSON.stringify({hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {command: 'npm test'}}))
      const code = await new Promise((r) => child.on('exit', r))
      expect(code).toBe(0)
      expect(out).toBe('')
      expect(got).toEqual([{url: '/api/v1/agents/agent-1/status', auth: 'Bearer svc_agt_smoke', body: expect.objectContaining({activity: 'executing', detail: 'Bash: npm test'})}])
    } finally {
      receiver.close()
    }
  })

  it('svc agent create runs from its quick bundle (no CLI bundle compiled); what it is not sure of goes to oclif', async () => {
    const got: Array<{method: string; url: string; body: unknown}> = []
    const agent = {id: 'a-1', name: 'fix', phase: 'running'}
    const receiver = http.createServer((req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        got.push({method: req.method ?? '', url: req.url ?? '', body: JSON.parse(body)})
        res.writeHead(201, {'content-type': 'application/json'}).end(JSON.stringify({agent}))
      })
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    try {
      const createEnv = {...env, SVC_HUB_ENDPOINT: `http://127.0.0.1:${(receiver.address() as {port: number}).port}`, SVC_AUTH_TOKEN: 'svc_usr_smoke', SVC_SEA_CODE_CACHE_CHECK: '1'}
      const child = spawn(svc, ['agent', 'create', 'fix', '--harness', 'shell', '--project', 'p1', 'the task', '--json'], {cwd: join(work, 'cwd'), env: createEnv, stdio: ['ignore', 'pipe', 'pipe']})
      let stdout = ''
      let stderr = ''
      child.stdout!.on('data', (d) => (stdout += d))
      child.stderr!.on('data', (d) => (stderr += d))
      expect(await new Promise((r) => child.on('exit', r))).toBe(0)
      expect(stderr).toBe('')
      expect(JSON.parse(stdout)).toEqual({agent})
      expect(got).toEqual([{method: 'POST', url: '/api/v1/agents', body: {name: 'fix', projectId: 'p1', harnessConfig: 'shell', task: 'the task'}}])
      // --help is oclif's: the CLI bundle is compiled (and says so under SVC_SEA_CODE_CACHE_CHECK).
      const help = run(['agent', 'create', '--help'], {SVC_SEA_CODE_CACHE_CHECK: '1'})
      expect(help.code).toBe(0)
      expect(help.stdout).toContain('$ svc agent create')
      expect(help.stderr).toBe('svc code cache accepted\n')
    } finally {
      receiver.close()
    }
  })

  it('--version names svc, its version and the Node it embeds', () => {
    expect(readdirSync(join(work, 'bin'))).toEqual(['svc'])
    const r = run(['--version'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(`svc/${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version} linux-x64 node-${process.version}`)
    expect(r.stderr).toBe('')
  })

  it('--help, help <command> and <command> --help work from the embedded command table', () => {
    const top = run(['--help'])
    expect(top.code).toBe(0)
    expect(top.stdout).toContain('TOPICS')
    expect(top.stdout).toMatch(/server\s+Run the Hub/)
    const viaHelp = run(['help', 'artifact', 'publish'])
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stdout).toContain('$ svc artifact publish')
    const viaFlag = run(['status', '--help'])
    expect(viaFlag.code).toBe(0)
    expect(viaFlag.stdout).toContain('$ svc status')
    expect(top.stderr + viaHelp.stderr + viaFlag.stderr).toBe('')
  })

  it('an unknown command exits 2', () => {
    expect(run(['no-such-command']).code).toBe(2)
  })

  it('server start serves /healthz on SQLite, with the native addon from the per-user cache', async () => {
    const started = await startHub(['server', 'start'], env)
    hub = started.child
    hubUrl = started.url
    const health = started.health
    expect(health.status).toBe(200)
    expect(JSON.parse(health.body)).toEqual({status: 'ok'})
    expect(existsSync(join(work, 'home', '.svc', 'hub.db'))).toBe(true)
    const cached = readdirSync(join(work, 'home', '.cache', 'svc'))
    expect(cached).toHaveLength(1)
    expect(readdirSync(join(work, 'home', '.cache', 'svc', cached[0]))).toEqual(['better_sqlite3.node'])
    expect(started.stderr()).not.toMatch(/Warning|require\(\)/)
  })

  it('serves the web client from inside the executable (no dist/web beside it)', async () => {
    expect(hub, 'the Hub test ran').toBeDefined()
    const page = await get(`${hubUrl}/`)
    expect(page.status).toBe(200)
    expect(page.body).toContain('<svc-app></svc-app>')
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)
    expect(script, page.body).not.toBeNull()
    const js = await get(`${hubUrl}${script![1]}`)
    expect(js.status).toBe(200)
    expect(js.body).toContain('svc-settings-section')
  })

  let projectId: string
  it('artifact publish and get round-trip a file through that Hub', () => {
    expect(hub, 'the Hub test ran').toBeDefined()
    projectId = runJson(['project', 'register', 'smoke', '--no-remote']).project.id
    const file = join(work, 'cwd', 'notes.txt')
    writeFileSync(file, 'hello from the single executable\n')
    const published = runJson(['artifact', 'publish', file, '--project', projectId])
    expect(published.artifact.ref).toMatch(/^svc:\/\/artifact\//)
    const out = join(work, 'cwd', 'fetched.txt')
    runJson(['artifact', 'get', published.artifact.ref, '-o', out])
    expect(readFileSync(out, 'utf8')).toBe('hello from the single executable\n')
  })

  it('a hosted Hub on S3 storage (the AWS SDK inside the executable) round-trips an artifact', {timeout: 120_000}, async () => {
    s3 = new S3rver({address: '127.0.0.1', port: 0, silent: true, directory: join(work, 's3'), configureBuckets: [{name: 'smoke'}]})
    const {port} = await s3.run()
    const home = join(work, 'home-s3')
    mkdirSync(home)
    const s3Hub = await startHub(['server', 'start', '--hosted', '--host', '127.0.0.1'], {
      ...env,
      HOME: home,
      SVC_SERVER_AUTH_DEVMODE: 'true',
      SVC_SERVER_STORAGE_PROVIDER: 's3',
      SVC_SERVER_STORAGE_ENDPOINT: `http://127.0.0.1:${port}`,
      SVC_SERVER_STORAGE_BUCKET: 'smoke',
      SVC_SERVER_STORAGE_ACCESSKEYID: 'S3RVER',
      SVC_SERVER_STORAGE_SECRETACCESSKEY: 'S3RVER',
    })
    // s3rver runs in this process, so the CLI must run without blocking it (no spawnSync).
    const cli = async (args: string[]) => {
      const child = spawn(svc, [...args, '--json'], {cwd: join(work, 'cwd'), env: {...env, HOME: home, SVC_HUB_ENDPOINT: s3Hub.url}, stdio: ['ignore', 'pipe', 'pipe']})
      let out = ''
      let err = ''
      child.stdout!.on('data', (d) => (out += d))
      child.stderr!.on('data', (d) => (err += d))
      const code = await new Promise((r) => child.on('close', r))
      expect(code, err + out).toBe(0)
      return JSON.parse(out)
    }
    const project = (await cli(['project', 'register', 's3smoke', '--no-remote'])).project
    const file = join(work, 'cwd', 's3.txt')
    writeFileSync(file, 'stored in S3\n')
    const published = await cli(['artifact', 'publish', file, '--project', project.id])
    const out = join(work, 'cwd', 's3-fetched.txt')
    await cli(['artifact', 'get', published.version.ref, '-o', out])
    expect(readFileSync(out, 'utf8')).toBe('stored in S3\n')
  })

  it("that Hub's git and tmux run from svc's process spawner, itself the executable", async () => {
    expect(hub, 'the Hub test ran').toBeDefined()
    // The spawner (src/broker/runtimes/spawner.ts) is the Hub's child: the executable run with the
    // spawner's argv and program, which names itself svc-spawner once it runs that program.
    const spawner = () =>
      readFileSync(`/proc/${hub!.pid}/task/${hub!.pid}/children`, 'utf8')
        .split(' ')
        .filter((p) => /^\d+$/.test(p))
        .find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('svc-spawner'))
    await expect.poll(spawner).toBeDefined()
    const pid = spawner()!
    expect(readlinkSync(`/proc/${pid}/exe`)).toBe(svc)
  })

  it('keys reach an agent started by that Hub', async () => {
    expect(projectId, 'the artifact test ran').toBeDefined()
    const agent = runJson(['agent', 'create', 'smoke-agent', '--harness', 'shell', '--project', projectId]).agent
    let sent: {delivered?: boolean} | undefined
    for (let i = 0; i < 50 && !sent; i++) {
      const r = run(['keys', agent.id, 'echo smoke-keys', '--project', projectId, '--json'], {SVC_HUB_ENDPOINT: hubUrl})
      if (r.code === 0) sent = JSON.parse(r.stdout)
      else await new Promise((res) => setTimeout(res, 200))
    }
    expect(sent).toMatchObject({delivered: true})
    expect(runJson(['keys', agent.id, 'Enter', '--project', projectId])).toMatchObject({delivered: true})
  })
})
