// Smoke test of the single executable (dist/svc, `npm run build:binary`): the file is copied
// ALONE into an empty directory and run with an empty HOME, so anything it still needed from the
// checkout (package.json, node_modules, dist/cli.js, the native addon) would fail here.
// The binary is built in beforeAll when it is missing or older than the sources (~30 s).
import {execFileSync, spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
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
  for (const p of ['src', 'commands', 'package.json', 'scripts/build-binary.mjs']) walk(join(ROOT, p))
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
let hubErr = ''

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

beforeAll(() => {
  ensureBinary()
  work = mkdtempSync(join(tmpdir(), 'svc-binary-smoke-'))
  for (const d of ['bin', 'home', 'cwd', 'tmux']) mkdirSync(join(work, d))
  svc = join(work, 'bin', 'svc')
  copyFileSync(DIST_SVC, svc)
  execFileSync('chmod', ['755', svc])
  env = {PATH: process.env.PATH, HOME: join(work, 'home'), TMUX_TMPDIR: join(work, 'tmux'), NO_COLOR: '1', LANG: 'C.UTF-8'}
}, 300_000)

afterAll(async () => {
  if (hub && hub.exitCode === null) {
    hub.kill('SIGTERM')
    await new Promise((r) => hub!.on('exit', r))
  }
  if (work) {
    spawnSync('tmux', ['kill-server'], {env, stdio: 'ignore'})
    rmSync(work, {recursive: true, force: true})
  }
})

describe('the single executable, alone in an empty directory', () => {
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
    const port = await freePort()
    const brokerPort = await freePort()
    hubUrl = `http://127.0.0.1:${port}`
    hub = spawn(svc, ['server', 'start', '--port', String(port)], {cwd: join(work, 'cwd'), env: {...env, SVC_SERVER_BROKER_PORT: String(brokerPort)}, stdio: ['ignore', 'ignore', 'pipe']})
    hub.stderr!.on('data', (d) => (hubErr += d))
    const deadline = Date.now() + 30_000
    let health: {status: number; body: string} | undefined
    while (!health) {
      if (hub.exitCode !== null) throw new Error(`the Hub exited ${hub.exitCode}: ${hubErr}`)
      if (Date.now() > deadline) throw new Error(`no /healthz within 30 s: ${hubErr}`)
      health = await get(`${hubUrl}/healthz`).catch(() => undefined)
      if (!health) await new Promise((r) => setTimeout(r, 100))
    }
    expect(health.status).toBe(200)
    expect(JSON.parse(health.body)).toEqual({status: 'ok'})
    expect(existsSync(join(work, 'home', '.svc', 'hub.db'))).toBe(true)
    const cached = readdirSync(join(work, 'home', '.cache', 'svc'))
    expect(cached).toHaveLength(1)
    expect(readdirSync(join(work, 'home', '.cache', 'svc', cached[0]))).toEqual(['better_sqlite3.node'])
    expect(hubErr).not.toMatch(/Warning|require\(\)/)
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
