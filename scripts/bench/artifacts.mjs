// Artifacts benchmark: starts a workstation Hub in a temp HOME, publishes and fetches a 32 MiB
// file over HTTP (streamed both ways) and prints the times beside `cp` of the same file and
// Node's SHA-256 of it, all measured in this run, plus the Hub's RSS before and after.
// Targets (printed, never asserted): upload within 2.5x of cp, download within 1.5x, and upload
// within 1.2x of the bare node:http hash+write upload below (issue 31).
// For scale, the same runs also time a bare node:http server in its own process (the floor:
// what loopback HTTP costs on this machine with no Hub at all): an upload it discards, one it
// hashes and writes on its event loop (as the Hub does, hash-writer.ts), and a download
// of the file. Each server's CPU per transfer (from /proc, all threads) is printed too: unlike
// the times, it moves less when other work shares the machine. The load average is printed.
// BENCH_BYTES=134217728 runs a 128 MiB file (raising the Hub's limit) to compare the RSS line:
// it should not move with the file size. BENCH_RUNS sets the number of runs (median printed).
import {execFileSync, spawn} from 'node:child_process'
import {createHash, randomBytes} from 'node:crypto'
import {createReadStream, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pipeline} from 'node:stream/promises'
import {fileURLToPath} from 'node:url'
import {cpuMs, freePort, loadAverage, requestJson} from './lib.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SIZE = Number(process.env.BENCH_BYTES ?? 32 * 1024 * 1024)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const mib = (kb) => `${(kb / 1024).toFixed(1)} MiB`


/** The floor: a bare node:http server (CommonJS, run with `node -e`; argv: port, file, dir). */
const FLOOR_SERVER = `
const http = require('node:http'), fs = require('node:fs'), {createHash} = require('node:crypto'), {join} = require('node:path')
const [port, file, dir] = process.argv.slice(1)
const MiB = 1024 * 1024
let n = 0
http.createServer((req, res) => {
  if (req.url === '/discard') return req.on('data', () => {}).on('end', () => res.end('{}'))
  if (req.url === '/store') {
    const h = createHash('sha256'), tmp = join(dir, 'floor-' + n++)
    req.on('data', (c) => h.update(c))
    return req.pipe(fs.createWriteStream(tmp, {highWaterMark: MiB})).on('finish', () => { fs.rmSync(tmp); res.end(JSON.stringify({sha256: h.digest('hex')})) })
  }
  res.setHeader('content-length', fs.statSync(file).size)
  fs.createReadStream(file, {highWaterMark: MiB}).pipe(res)
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\\n'))
`

/** VmRSS and VmHWM (peak) of a process, in KiB (Linux). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN)
  return {rss: kb('VmRSS'), hwm: kb('VmHWM')}
}

const request = requestJson

/** Streams `file` as the request body (as `svc artifact publish` does). */
function upload(url, token, file, sha) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {method: 'POST', headers: {authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': String(SIZE), 'x-content-sha256': sha}}, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => (res.statusCode < 300 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`publish: ${res.statusCode} ${Buffer.concat(chunks)}`))))
    })
    req.on('error', reject)
    pipeline(createReadStream(file, {highWaterMark: 1 << 20}), req).catch(reject)
  })
}

/** Streams a file's bytes from the Hub to disk. */
function download(url, token, dest) {
  return new Promise((resolve, reject) => {
    http
      .get(url, {headers: {authorization: `Bearer ${token}`}}, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`download: ${res.statusCode}`))
        pipeline(res, createWriteStream(dest, {highWaterMark: 1 << 20})).then(resolve, reject)
      })
      .on('error', reject)
  })
}

async function main() {
  if (!existsSync(join(ROOT, 'dist', 'cli.js'))) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], {stdio: 'inherit'})
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-'))
  const file = join(home, 'payload.bin')
  writeFileSync(file, randomBytes(SIZE))
  const port = await freePort()
  const env = {...process.env, HOME: home}
  for (const k of Object.keys(env)) if (k.startsWith('SVC_') || k === 'NODE_EXTRA_CA_CERTS') delete env[k]
  // The co-located broker gets its own port, so the bench runs beside another Hub.
  env.SVC_SERVER_BROKER_PORT = String(await freePort())
  // Larger files than the default limit only when BENCH_BYTES asks for them (memory check).
  if (SIZE > 32 * 1024 * 1024) env.SVC_ARTIFACTS_MAXFILEBYTES = String(SIZE)
  const hub = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'server', 'start', '--port', String(port)], {env, stdio: ['ignore', 'ignore', 'pipe']})
  let log = ''
  hub.stderr.on('data', (d) => (log += d))
  const base = `http://127.0.0.1:${port}`
  try {
    for (let i = 0; ; i++) {
      try {
        await request('GET', `${base}/healthz`)
        break
      } catch (err) {
        if (i > 200 || hub.exitCode !== null) throw new Error(`the Hub did not start: ${err.message}\n${log}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const project = (await request('POST', `${base}/api/v1/projects/register`, {token, headers: {'content-type': 'application/json'}, body: JSON.stringify({name: 'bench'})})).project.id
    // Warm up the routes, then take the baseline memory.
    const small = join(home, 'small.txt')
    writeFileSync(small, 'warm up\n')
    await request('POST', `${base}/api/v1/artifacts?name=small.txt&scope=${project}`, {token, body: readFileSync(small)})
    const before = memory(hub.pid)

    // The floor server reads the same file and writes its temp files beside it.
    const floorPort = await freePort()
    const floor = spawn(process.execPath, ['-e', FLOOR_SERVER, String(floorPort), file, home], {stdio: ['ignore', 'pipe', 'inherit']})
    await new Promise((resolve, reject) => {
      floor.stdout.once('data', resolve)
      floor.once('exit', () => reject(new Error('the floor server did not start')))
    })
    const floorBase = `http://127.0.0.1:${floorPort}`
    const loadBefore = loadAverage()

    const times = {sha: [], cp: [], up: [], down: [], floorDiscard: [], floorStore: [], floorDown: []}
    const cpu = {up: 0, down: 0, floorDiscard: 0, floorStore: 0, floorDown: 0}
    let shaValue = ''
    let last
    /** Times `fn` into `times[key]`; with `pid`, adds that server's CPU to `cpu[key]`. */
    const timed = async (key, fn, pid) => {
      const c0 = pid ? cpuMs(pid) : 0
      const t = process.hrtime.bigint()
      const r = await fn()
      times[key].push(ms(t))
      if (pid) cpu[key] += cpuMs(pid) - c0
      return r
    }
    const dest = join(home, 'down.bin')
    const fetched = async (url, tok) => {
      await download(url, tok, dest)
      if (statSync(dest).size !== SIZE) throw new Error('short download')
      rmSync(dest)
    }
    for (let i = 0; i < RUNS; i++) {
      await timed('sha', async () => {
        const h = createHash('sha256')
        await pipeline(createReadStream(file, {highWaterMark: 1 << 20}), h)
        shaValue = h.digest('hex')
      })
      const copy = join(home, 'copy.bin')
      await timed('cp', () => execFileSync('cp', [file, copy]))
      rmSync(copy)
      const hubRuns = async () => {
        last = await timed('up', () => upload(`${base}/api/v1/artifacts?name=payload.bin&scope=${project}`, token, file, shaValue), hub.pid)
        await timed('down', () => fetched(`${base}/api/v1/artifacts/${last.artifact.id}/files/payload.bin`, token), hub.pid)
      }
      const floorRuns = async () => {
        await timed('floorDiscard', () => upload(`${floorBase}/discard`, '', file, shaValue), floor.pid)
        const got = await timed('floorStore', () => upload(`${floorBase}/store`, '', file, shaValue), floor.pid)
        if (got.sha256 !== shaValue) throw new Error('floor digest mismatch')
        await timed('floorDown', () => fetched(`${floorBase}/`, ''), floor.pid)
      }
      // Alternating which goes first spreads any drift in the machine's load over both.
      if (i % 2) await floorRuns(), await hubRuns()
      else await hubRuns(), await floorRuns()
    }
    floor.kill()
    if (last.version.manifest[0].sha256 !== shaValue) throw new Error('digest mismatch')
    const after = memory(hub.pid)

    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]))
    const c = m.cp
    const x = (v) => `${(v / c).toFixed(2)}x cp`
    // Server CPU per transfer: 10 ms ticks summed over the runs, so only the mean is meaningful.
    const cpuOf = (key) => `   server CPU ${(cpu[key] / RUNS).toFixed(0)} ms`
    const line = (label, value, extra = '') => console.log(`${label.padEnd(44)} ${value.toFixed(1).padStart(8)} ms${extra}`)
    console.log(`artifacts bench: ${(SIZE / 1024 / 1024).toFixed(0)} MiB file, median of ${RUNS} runs, Node ${process.version}, load average ${loadBefore} -> ${loadAverage()}`)
    line('cp (same file, same disk)', c)
    line('node sha-256 of the file', m.sha, `   ${x(m.sha)}`)
    line('publish (stream + hash + store)', m.up, `   ${x(m.up)}   target <= 2.5x: ${m.up / c <= 2.5 ? 'met' : 'MISSED'}${cpuOf('up')}`)
    line('fetch (stream to disk)', m.down, `   ${x(m.down)}   target <= 1.5x: ${m.down / c <= 1.5 ? 'met' : 'MISSED'}${cpuOf('down')}`)
    line('floor: node:http upload, body discarded', m.floorDiscard, `   ${x(m.floorDiscard)}${cpuOf('floorDiscard')}`)
    const vsFloor = m.up / m.floorStore
    line('floor: node:http upload, hash + write inline', m.floorStore, `   ${x(m.floorStore)}   publish / this: ${vsFloor.toFixed(2)} (target <= 1.2, issue 31: ${vsFloor <= 1.2 ? 'met' : 'MISSED'})${cpuOf('floorStore')}`)
    line('floor: node:http download of the file', m.floorDown, `   ${x(m.floorDown)}   fetch / this: ${(m.down / m.floorDown).toFixed(2)}${cpuOf('floorDown')}`)
    console.log(`hub RSS before ${mib(before.rss)}, after ${mib(after.rss)} (peak ${mib(before.hwm)} -> ${mib(after.hwm)}; file ${(SIZE / 1024 / 1024).toFixed(0)} MiB x ${RUNS * 2} transfers)`)
  } finally {
    hub.kill('SIGTERM')
    await new Promise((r) => hub.once('exit', r))
    rmSync(home, {recursive: true, force: true})
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
