// Settings propagation benchmark: two hosted Hubs (`svc server start --hosted`) on one
// PostgreSQL schema, as two replicas. Each round saves a Layer-1 value on replica A
// (`PUT /api/v1/admin/server-config`) and polls replica B's GET until it shows the value. Prints
// the propagation delay (from A's answer to B's first read showing it): median and p99
// (target p99 < 100 ms). Targets are printed, never asserted.
// BENCH_ROUNDS (200) changes the number of saves; SVC_TEST_PG_URL names the server
// (default postgres://postgres@127.0.0.1:5432/test).
import {spawn} from 'node:child_process'
import {mkdtempSync, openSync, readFileSync, rmSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {randomBytes} from 'node:crypto'
import pg from 'pg'
import {freePort, requestJson} from './lib.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200)
const PG = process.env.SVC_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test'
const agent = new http.Agent({keepAlive: true, maxSockets: 4})


const request = (method, url, opts = {}) => requestJson(method, url, {...opts, agent})

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function waitHealthy(url, ms = 30_000) {
  const end = Date.now() + ms
  for (;;) {
    try {
      await request('GET', `${url}/healthz`)
      return
    } catch (err) {
      if (Date.now() > end) throw err
      await sleep(100)
    }
  }
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]

async function main() {
  const schema = 'bench_' + randomBytes(5).toString('hex')
  const admin = new pg.Client({connectionString: PG})
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  const u = new URL(PG)
  u.searchParams.set('options', `-c search_path=${schema}`)
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-settings-'))
  const env = {...process.env, HOME: home, SVC_SERVER_DATABASE_DRIVER: 'postgres', SVC_SERVER_DATABASE_URL: u.toString(), SVC_SERVER_AUTH_DEVMODE: 'true', SVC_SERVER_LOGLEVEL: 'warn'}
  const procs = []
  try {
    const urls = []
    for (const name of ['a', 'b']) {
      const port = await freePort()
      const p = spawn(process.execPath, [join(ROOT, 'bin/run.js'), 'server', 'start', '--hosted', '--port', String(port), '--host', '127.0.0.1'], {env, stdio: ['ignore', 'ignore', openSync(join(home, `hub-${name}.log`), 'w')]})
      procs.push(p)
      urls.push(`http://127.0.0.1:${port}`)
      // Start one after the other: both migrate the same schema.
      await waitHealthy(urls.at(-1))
    }
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const [a, b] = urls
    const delays = []
    for (let i = 1; i <= ROUNDS; i++) {
      const value = 1000 + i
      await request('PUT', `${a}/api/v1/admin/server-config`, {token, body: {quotas: {max_agents_per_project: value}}})
      const t0 = performance.now()
      for (;;) {
        const got = await request('GET', `${b}/api/v1/admin/server-config`, {token})
        if (got.quotas?.max_agents_per_project === value) break
        if (performance.now() - t0 > 65_000) throw new Error(`round ${i}: replica B never showed the value`)
      }
      delays.push(performance.now() - t0)
    }
    delays.sort((x, y) => x - y)
    const f = (n) => `${n.toFixed(1)} ms`
    process.stdout.write(`settings propagation between two hosted replicas on PostgreSQL (${ROUNDS} saves)\n`)
    process.stdout.write(`  median ${f(pct(delays, 50))}   p99 ${f(pct(delays, 99))}   max ${f(delays.at(-1))}   (target p99 < 100 ms)\n`)
  } catch (err) {
    for (const name of ['a', 'b']) {
      try {
        process.stderr.write(`--- hub ${name} log\n${readFileSync(join(home, `hub-${name}.log`), 'utf8').slice(-3000)}\n`)
      } catch {
        // not started
      }
    }
    throw err
  } finally {
    for (const p of procs) p.kill('SIGTERM')
    await sleep(500)
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
    rmSync(home, {recursive: true, force: true})
    agent.destroy()
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`)
  process.exit(1)
})
