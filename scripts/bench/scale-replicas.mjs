// Hosted at scale (issue 32), the replicas' sections: `npm run bench -- scale-replicas [--runs N]
// [--agents N] [--brokers N] [--calls N]`.
//
// Needs PostgreSQL (SVC_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test); each
// section uses a fresh schema, dropped after it. Two hosted replicas A and B (`svc server start
// --hosted`) on one database; brokers started with `--hub A` (so A holds every tunnel).
//
// Section "keys through the other replica": one shell agent; the same keys call made through A
// (holds the broker) and through B (forwards to A), interleaved, N calls each, per run. Target:
// median added latency (B - A) <= 10 ms.
//
// Section "agents over brokers": N shell agents (default 200) created through A and B in turn,
// 8 at a time, placed over M brokers (default 4): create to running (the create answers once the
// agent runs) median and p90, the spread per broker, and replica A's RSS per agent.
import {spawn, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import pg from 'pg'
import {freePort, loadAverage, requestJson, until} from './lib.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = join(ROOT, 'bin', 'run.js')
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const PG = process.env.SVC_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test'
const out = (s) => process.stdout.write(s + '\n')
const sorted = (xs) => [...xs].sort((a, b) => a - b)
const median = (xs) => sorted(xs)[Math.floor(xs.length / 2)]
const p90 = (xs) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))]
const ms = (x) => `${x.toFixed(1)} ms`

function child(args, env) {
  const c = spawn(process.execPath, [BIN, ...args], {env, stdio: ['ignore', 'pipe', 'pipe']})
  const p = {c, out: '', err: ''}
  c.stdout.on('data', (d) => (p.out += d))
  c.stderr.on('data', (d) => (p.err = (p.err + d).slice(-20_000)))
  p.stop = () =>
    new Promise((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve()
      c.once('exit', () => resolve())
      c.kill('SIGTERM')
      setTimeout(() => c.kill('SIGKILL'), 20_000).unref()
    })
  return p
}

/** Two hosted replicas on a fresh schema and `brokers` brokers held by A; `fn(deployment)`. */
async function withDeployment(brokers, fn) {
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-replicas-'))
  const name = 'bench_' + randomBytes(6).toString('hex')
  const admin = new pg.Client({connectionString: PG})
  await admin.connect()
  await admin.query(`create schema ${name}`)
  const u = new URL(PG)
  u.searchParams.set('options', `-c search_path=${name}`)
  const procs = []
  const stateDirs = []
  try {
    const env = {...process.env, HOME: home, NO_COLOR: '1', SVC_SERVER_DATABASE_DRIVER: 'postgres', SVC_SERVER_DATABASE_URL: u.toString(), SVC_SERVER_AUTH_DEVMODE: 'true', SVC_SECRETS_KEY: randomBytes(32).toString('hex'), SVC_LOG_LEVEL: 'warn'}
    for (const k of Object.keys(env)) if (k.startsWith('SVC_HUB') || k === 'SVC_AUTH_TOKEN') delete env[k]
    const urls = []
    const hubs = []
    for (let i = 0; i < 2; i++) {
      const port = await freePort()
      urls.push(`http://127.0.0.1:${port}`)
      const h = child(['server', 'start', '--hosted', '--host', '127.0.0.1', '--port', String(port)], env)
      procs.push(h)
      hubs.push(h)
      // One after the other: the first migrates the schema.
      await until(() => requestJson('GET', `${urls[i]}/readyz`), 90_000, 'a replica')
    }
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    // Keep-alive, as a CLI or web client would reuse its connection.
    const agent = new http.Agent({keepAlive: true, maxSockets: 16})
    const api = (i, method, path, body) => requestJson(method, `${urls[i]}${path}`, {token, body, agent})
    const ids = []
    for (let i = 0; i < brokers; i++) {
      const {joinToken, broker} = await api(0, 'POST', '/api/v1/brokers/register', {name: `bench-${i}`})
      const stateDir = mkdtempSync(join(home, 'broker-'))
      stateDirs.push(stateDir)
      procs.push(child(['broker', 'start', '--hub', urls[0], '--join-token', joinToken, '--state-dir', stateDir, '--runtime', 'local', '--port', '0'], {...env, TMUX_TMPDIR: stateDir}))
      ids.push(broker.id)
    }
    // B sees every broker connected (held by A, reached through it).
    await until(async () => (await api(1, 'GET', '/api/v1/brokers')).brokers.filter((b) => ids.includes(b.id) && b.connected).length === ids.length, 90_000, 'brokers seen by B')
    const project = (await api(0, 'POST', '/api/v1/projects/register', {name: 'bench'})).project
    // A project holds at most quotas.max_agents_per_project (100) agents: more go to more projects.
    const projectFor = async (n) => (await api(0, 'POST', '/api/v1/projects/register', {name: `bench-${n}`})).project
    return await fn({api, urls, ids, project, projectFor, pidA: hubs[0].c.pid})
  } finally {
    for (const p of procs.reverse()) await p.stop()
    for (const d of stateDirs) spawnSync('tmux', ['-L', 'svc', 'kill-server'], {env: {...process.env, TMUX_TMPDIR: d}})
    await admin.query(`drop schema if exists ${name} cascade`).catch(() => {})
    await admin.end()
    rmSync(home, {recursive: true, force: true})
  }
}

/** Section: the keys call through the replica that does not hold the broker. */
export async function keysThroughOtherReplica({runs = 3, calls = 100} = {}) {
  out(`== keys through the other replica: ${calls} calls through each of A (holds the broker) and B, ${runs} runs (load ${loadAverage()})`)
  const added = []
  for (let r = 0; r < runs; r++) {
    await withDeployment(1, async ({api, project}) => {
      const {agent} = await api(0, 'POST', '/api/v1/agents', {name: 'typist', projectId: project.id, harnessConfig: 'shell'})
      const time = async (i) => {
        const t0 = performance.now()
        await api(i, 'POST', `/api/v1/agents/${agent.id}/keys`, {keys: '#'})
        return performance.now() - t0
      }
      for (let i = 0; i < 10; i++) await time(i % 2) // warm-up: connections, JIT
      const a = []
      const b = []
      for (let i = 0; i < calls; i++) {
        a.push(await time(0))
        b.push(await time(1))
      }
      added.push(median(b) - median(a))
      out(`  run ${r + 1}: A median ${ms(median(a))}, B median ${ms(median(b))}, added ${ms(median(b) - median(a))}`)
    })
  }
  const m = median(added)
  out(`  median added latency: ${ms(m)} (target <= 10 ms) ${m <= 10 ? 'OK' : 'OVER'}`)
}

const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])

/** Agents per project in the section below, within the default quota of 100. */
const PER_PROJECT = 100

/** Section: many shell agents over several brokers, through both replicas. */
export async function agentsOverBrokers({agents = 200, brokers = 4} = {}) {
  out(`== ${agents} shell agents over ${brokers} brokers, created through A and B in turn (load ${loadAverage()})`)
  await withDeployment(brokers, async ({api, ids, projectFor, pidA}) => {
    const projects = []
    for (let n = 0; n * PER_PROJECT < agents; n++) projects.push(await projectFor(n))
    const rssBefore = rssKb(pidA)
    const times = []
    let next = 0
    const worker = async () => {
      while (next < agents) {
        const i = next++
        const t0 = performance.now()
        const {agent} = await api(i % 2, 'POST', '/api/v1/agents', {name: `s${i}`, projectId: projects[Math.floor(i / PER_PROJECT)].id, harnessConfig: 'shell'})
        if (agent.phase !== 'running') throw new Error(`agent s${i} is ${agent.phase}: ${agent.error}`)
        times.push(performance.now() - t0)
      }
    }
    await Promise.all(Array.from({length: 8}, worker))
    const spread = (await api(1, 'GET', '/api/v1/brokers')).brokers.filter((b) => ids.includes(b.id)).map((b) => b.agents)
    const rssAfter = rssKb(pidA)
    out(`  create to running: median ${ms(median(times))}, p90 ${ms(p90(times))}; agents per broker ${spread.join(', ')}`)
    // Both: the growth per agent is within the garbage collector's noise for small N.
    out(`  replica A RSS ${(rssBefore / 1024).toFixed(0)} MiB -> ${(rssAfter / 1024).toFixed(0)} MiB: ${(rssAfter / agents).toFixed(0)} KiB per agent in all, ${((rssAfter - rssBefore) / agents).toFixed(0)} KiB per agent of growth`)
  })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await keysThroughOtherReplica({runs: arg('runs', 3), calls: arg('calls', 100)})
  await agentsOverBrokers({agents: arg('agents', 200), brokers: arg('brokers', 4)})
}
