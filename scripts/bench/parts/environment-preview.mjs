// Environments benchmark, preview part (issue 29): `npm run bench -- environment preview`.
//
// A workstation Hub (the built dist: run `npm run build` first) with previews on runs a shell
// agent on the host's network (`runtimes.local.network: host`), so the same server in the agent
// is fetched both directly (127.0.0.1:$PORT) and through the Hub's preview
// (<hub>/agents/<id>/ports/<port>/: the Hub, the broker's tunnel, the broker's connection), in
// the same run, interleaved:
// - throughput: a 10 MiB download, BENCH_ROUNDS (7) each way; target >= 0.5x of direct;
// - latency: a small request, BENCH_REQUESTS (60) each way, each on a new connection as a
//   browser's first request would be; target median added <= 5 ms.
// Printed, never asserted. With each download figure, the Hub's CPU per download by thread
// (main; `node`: V8's workers, the GC's among them). BENCH_ALONE=1 also times the same relay
// alone in a bare process (parts/preview-relay-alone.mjs) in the same rounds; BENCH_STRACE=<dir>
// counts the Hub's system calls over the downloads; BENCH_HUB_NODE_ARGS gives its node options.
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {copyFileSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import {loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath} from 'node:url'
import WebSocket from 'ws'
import {cpuMs, freePort, requestJson, until} from '../lib.mjs'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 7
const REQUESTS = Number(process.env.BENCH_REQUESTS) || 60
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** CPU time (ms) of `pid`'s threads: `main`, and the others by name (`node`: V8's workers, the GC's among them, and libuv's pool). */
function cpuByThread(pid) {
  const out = {}
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
      out[name] = (out[name] ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / 100
    } catch {}
  }
  return out
}

/** Time of one GET, body read to the end (no keep-alive: a new connection each time). */
function timedGet(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    http
      .get(url, {headers, agent: false}, (res) => {
        let n = 0
        res.on('data', (c) => (n += c.length))
        res.on('end', () => (res.statusCode === 200 ? resolve({ms: performance.now() - t0, bytes: n}) : reject(new Error(`${url}: ${res.statusCode}`))))
      })
      .on('error', reject)
  })
}

const work = mkdtempSync(join(tmpdir(), 'svc-bench-preview-'))
const home = join(work, 'home')
const tmuxDir = join(work, 'tmux')
const checkout = join(work, 'checkout')
for (const d of [home, join(home, '.svc'), tmuxDir, checkout]) mkdirSync(d, {recursive: true})
writeFileSync(join(home, '.svc', 'settings.yaml'), 'schema_version: "1"\nauto_expose_ports:\n  enabled: true\nruntimes:\n  local:\n    type: local\n    network: host\n')
const env = {}
for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && !['NODE_OPTIONS', 'TMUX', 'TMUX_PANE'].includes(k)) env[k] = v
Object.assign(env, {HOME: home, TMUX_TMPDIR: tmuxDir, NO_COLOR: '1', SVC_SERVER_BROKER_RUNTIME: 'local', DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock'})
const git = (...args) => execFileSync('git', args, {cwd: checkout, stdio: 'ignore'})
git('init', '-q', '-b', 'main')
copyFileSync(join(ROOT, 'test/fixtures/ports/agent-server.cjs'), join(checkout, 'server.cjs'))
git('add', '-A')
git('-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', 'init')
const hubPort = await freePort()
const url = `http://127.0.0.1:${hubPort}`
// BENCH_PROFILE=<dir>: the Hub's process is profiled (through its inspector) during the
// downloads alone and during the small requests alone, written there as preview-download- and
// preview-small-<time>.cpuprofile: its start-up (module loading, schema compiling) stays out.
const inspectPort = process.env.BENCH_PROFILE ? await freePort() : 0
const inspect = inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : []
// BENCH_HUB_NODE_ARGS: node options for the Hub's process (`--trace-gc`, heap sizes), space-separated.
const nodeArgs = (process.env.BENCH_HUB_NODE_ARGS ?? '').split(' ').filter(Boolean)
const hub = spawn(process.execPath, [...nodeArgs, ...inspect, join(ROOT, 'bin', 'run.js'), 'server', 'start', '--port', String(hubPort)], {env: {...env, SVC_SERVER_BROKER_PORT: String(await freePort())}, stdio: ['ignore', 'ignore', openSync(join(work, 'hub.log'), 'w')], detached: true})

/** Starts the Hub's CPU profiler; the function returned stops it and writes `<name>-<time>.cpuprofile`. */
async function profileWindow(name) {
  if (!inspectPort) return async () => {}
  const [target] = await requestJson('GET', `http://127.0.0.1:${inspectPort}/json/list`)
  const ws = new WebSocket(target.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  let id = 0
  const pending = new Map()
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString())
    pending.get(m.id)?.(m)
  })
  const call = (method, params = {}) => new Promise((resolve) => (pending.set(++id, resolve), ws.send(JSON.stringify({id, method, params}))))
  await call('Profiler.enable')
  await call('Profiler.setSamplingInterval', {interval: 200})
  await call('Profiler.start')
  return async () => {
    const {result} = await call('Profiler.stop')
    mkdirSync(process.env.BENCH_PROFILE, {recursive: true})
    const file = join(process.env.BENCH_PROFILE, `${name}-${Date.now()}.cpuprofile`)
    writeFileSync(file, JSON.stringify(result.profile))
    console.log(`preview: the Hub's CPU profile of that window: ${file}`)
    ws.close()
  }
}
/** BENCH_STRACE=<dir>: the Hub's system calls over a window, counted (`strace -c -f`), written there as <name>-<time>.strace. */
async function straceWindow(name) {
  if (!process.env.BENCH_STRACE) return async () => {}
  mkdirSync(process.env.BENCH_STRACE, {recursive: true})
  const file = join(process.env.BENCH_STRACE, `${name}-${Date.now()}.strace`)
  const tracer = spawn('strace', ['-c', '-f', '-o', file, '-p', String(hub.pid)], {stdio: ['ignore', 'ignore', 'pipe']})
  let attached = ''
  tracer.stderr.on('data', (d) => (attached += d))
  await until(async () => attached.includes('attached') || tracer.exitCode !== null, 10_000, 'strace to attach')
  await new Promise((r) => setTimeout(r, 200))
  return async () => {
    tracer.kill('SIGINT')
    await until(async () => tracer.exitCode !== null || tracer.signalCode !== null, 10_000, 'strace to stop')
    console.log(`preview: the Hub's system calls over that window: ${file}`)
  }
}
let alone = null
try {
  await until(() => requestJson('GET', `${url}/healthz`).then(() => true), 180_000, 'the Hub')
  const token = await until(async () => readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim(), 30_000, 'the dev token')
  const api = (method, path, body) => requestJson(method, `${url}/api/v1${path}`, {token, body})
  await until(async () => (await api('GET', '/brokers')).brokers.some((b) => b.colocated && b.connected), 30_000, 'the co-located broker')
  const {project} = await api('POST', '/projects/register', {name: 'bench', localPath: checkout})
  const {agent} = await api('POST', '/agents', {name: 'preview', projectId: project.id, harnessConfig: 'shell'})
  await until(() => api('POST', `/agents/${agent.id}/keys`, {keys: 'node server.cjs $PORT 127.0.0.1 bench\r'}), 30_000, 'the terminal')
  const port = await until(async () => (await api('GET', `/agents/${agent.id}/ports`)).ports[0]?.port, 30_000, 'the agent listening')
  const direct = `http://127.0.0.1:${port}`
  const preview = `${url}/agents/${agent.id}/ports/${port}`
  const auth = {authorization: `Bearer ${token}`}
  // BENCH_ALONE=1: the same relay alone in a bare process (parts/preview-relay-alone.mjs), timed
  // in the same rounds: what the Hub adds around it apart from what the relay costs.
  alone = process.env.BENCH_ALONE ? spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/bench/parts/preview-relay-alone.mjs'), String(port)], {cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], detached: true}) : null
  const aloneUrl = alone && `http://127.0.0.1:${await new Promise((resolve) => alone.stdout.once('data', (d) => resolve(d.toString().trim())))}`
  // Warm the paths (the broker's first connection, the JIT).
  for (let i = 0; i < 3; i++) await Promise.all([timedGet(`${direct}/big`), timedGet(`${preview}/big`, auth), aloneUrl && timedGet(`${aloneUrl}/big`)])
  const aloneTimes = []
  let aloneCpu = 0
  const big = {direct: [], preview: []}
  // The Hub's CPU time (its process also runs the co-located broker) per preview download: what
  // the forward costs, apart from waiting to be scheduled on a loaded machine.
  let hubCpu = 0
  // By thread too: the main one (the relay's JavaScript and its reads and writes) apart from V8's
  // workers (garbage collection) and libuv's pool.
  const threads = {}
  let stopProfile = await profileWindow('preview-download')
  const stopStrace = await straceWindow('preview-download')
  for (let i = 0; i < ROUNDS; i++) {
    big.direct.push((await timedGet(`${direct}/big`)).ms)
    const cpu0 = cpuMs(hub.pid)
    const byThread0 = cpuByThread(hub.pid)
    big.preview.push((await timedGet(`${preview}/big`, auth)).ms)
    hubCpu += cpuMs(hub.pid) - cpu0
    for (const [name, ms] of Object.entries(cpuByThread(hub.pid))) threads[name] = (threads[name] ?? 0) + ms - (byThread0[name] ?? 0)
    if (aloneUrl) {
      const alone0 = cpuMs(alone.pid)
      aloneTimes.push((await timedGet(`${aloneUrl}/big`)).ms)
      aloneCpu += cpuMs(alone.pid) - alone0
    }
  }
  alone?.kill()
  await stopStrace()
  await stopProfile()
  const small = {direct: [], preview: []}
  let smallCpu = 0
  stopProfile = await profileWindow('preview-small')
  for (let i = 0; i < REQUESTS; i++) {
    small.direct.push((await timedGet(`${direct}/hello`)).ms)
    const cpu0 = cpuMs(hub.pid)
    small.preview.push((await timedGet(`${preview}/hello`, auth)).ms)
    smallCpu += cpuMs(hub.pid) - cpu0
  }
  await stopProfile()
  const mib = 10
  const rate = (ms) => (mib / (ms / 1000)).toFixed(0)
  const ratio = median(big.direct) / median(big.preview)
  const added = median(small.preview) - median(small.direct)
  console.log(`preview: 10 MiB download, ${ROUNDS} rounds each (load ${loadavg()[0].toFixed(2)}): direct median ${median(big.direct).toFixed(0)} ms (${rate(median(big.direct))} MiB/s), through the Hub ${median(big.preview).toFixed(0)} ms (${rate(median(big.preview))} MiB/s): ${ratio.toFixed(2)}x of direct (target >= 0.5x: ${ratio >= 0.5 ? 'met' : 'NOT met'}); the Hub's process used ${(hubCpu / ROUNDS).toFixed(0)} ms of CPU per download through it (${Object.entries(threads).filter(([, ms]) => ms > 0).map(([name, ms]) => `${name} ${(ms / ROUNDS).toFixed(1)}`).join(', ')})`)
  if (aloneUrl) console.log(`preview: the relay alone (same rounds): ${median(aloneTimes).toFixed(0)} ms, ${(median(big.direct) / median(aloneTimes)).toFixed(2)}x of direct; its process used ${(aloneCpu / ROUNDS).toFixed(0)} ms of CPU per download`)
  console.log(`preview: small request, ${REQUESTS} each on a new connection: direct median ${median(small.direct).toFixed(2)} ms, through the Hub ${median(small.preview).toFixed(2)} ms: ${added.toFixed(2)} ms added (target <= 5 ms: ${added <= 5 ? 'met' : 'NOT met'}); the Hub's process used ${(smallCpu / REQUESTS).toFixed(1)} ms of CPU per request through it`)
} finally {
  if (alone && alone.exitCode === null) alone.kill()
  if (hub.exitCode === null) {
    process.kill(-hub.pid, 'SIGTERM')
    await until(async () => hub.exitCode !== null, 30_000, 'the Hub to stop').catch(() => process.kill(-hub.pid, 'SIGKILL'))
  }
  spawnSync('tmux', ['-L', 'svc', 'kill-server'], {env, stdio: 'ignore'})
  rmSync(work, {recursive: true, force: true, maxRetries: 5})
}
