// Teams benchmark (`npm run bench -- teams`). Two parts (BENCH_PARTS=fanout,tree picks some):
// 1. fanout: a workstation Hub (`svc server start` in a temp HOME, SQLite, its co-located broker
//    on the local tmux runtime with a private TMUX_TMPDIR) and a `shell` lead agent; the lead,
//    with its own token, asks for BENCH_CHILDREN (10) children at once (`POST /api/v1/agents`,
//    each a `shell` child), and the time from the first create to all of them `running` is taken
//    (GET /api/v1/agents polled every 25 ms), median of BENCH_RUNS (3) runs. Target <= 5 s. Also
//    the Hub+broker RSS growth per running child (the Hub process tree without tmux and the
//    agents' shells), target < 2 MB per agent. The children are deleted between runs. Each run
//    also prints where the time went (parts/agent-start-marks.mjs: when each child's repository,
//    record, tmux log and session process appeared), as spans over the children and per child.
// 2. tree: GET /api/v1/agents/:root/tree over HTTP on such a Hub (SQLite), whose database was
//    seeded directly through the store (from this process, beside the running Hub) with 1,000
//    agents in 5 levels (1, 8, 64, 300, 627), BENCH_TREE_RUNS (20) requests after one warm-up:
//    median time to the whole answer (parsed, as a client has it), and the Hub's CPU per request
//    (from /proc over all the requests; a loaded machine stretches the time, not the CPU).
//    Target < 50 ms.
// Targets are printed, never asserted.
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {cpus, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {register} from 'tsx/esm/api'
import {cpuMs, freePort, requestJson, treeRssKb} from './lib.mjs'
import {startMarks} from './parts/agent-start-marks.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PARTS = new Set((process.env.BENCH_PARTS ?? 'fanout,tree').split(','))
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const CHILDREN = Number(process.env.BENCH_CHILDREN ?? 10)
const TREE_RUNS = Number(process.env.BENCH_TREE_RUNS ?? 20)
const LEVELS = [1, 8, 64, 300, 627]
// Node flags for the Hub, e.g. BENCH_HUB_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
const HUB_NODE_ARGS = (process.env.BENCH_HUB_NODE_ARGS ?? '').split(' ').filter(Boolean)

const out = (line) => process.stdout.write(`${line}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
const verdict = (ok) => (ok ? 'met' : 'MISSED')

async function until(fn, timeoutMs, what, everyMs = 50) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}

// Left out of the Hub+broker RSS: tmux and what the agents run.
const NOT_HUB = /^(tmux|bash|sh|git|bwrap|socat)/

/** A workstation Hub in a temp HOME with a registered checkout: its URL, tokens, project and a stop. */
async function startHub() {
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-teams-'))
  const home = join(work, 'home')
  const tmuxDir = join(work, 'tmux')
  const checkout = join(work, 'checkout')
  for (const d of [home, tmuxDir, checkout]) mkdirSync(d)
  const env = {}
  const dropped = new Set(['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'TMUX', 'TMUX_PANE'])
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && !dropped.has(k)) env[k] = v
  Object.assign(env, {HOME: home, TMUX_TMPDIR: tmuxDir, NO_COLOR: '1', DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock', GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com'})
  const git = (...args) => execFileSync('git', args, {cwd: checkout, env, stdio: 'ignore'})
  git('init', '-q', '-b', 'main')
  writeFileSync(join(checkout, 'README.md'), '# bench\n')
  git('add', '-A')
  git('commit', '-q', '-m', 'init')
  const hubPort = await freePort()
  const url = `http://127.0.0.1:${hubPort}`
  const logFile = join(work, 'hub.log')
  const hub = spawn(process.execPath, [...HUB_NODE_ARGS, join(ROOT, 'bin', 'run.js'), 'server', 'start', '--port', String(hubPort)], {env: {...env, SVC_SERVER_BROKER_PORT: String(await freePort())}, stdio: ['ignore', 'ignore', openSync(logFile, 'w')], detached: true})
  const stop = async () => {
    if (hub.exitCode === null) {
      process.kill(-hub.pid, 'SIGTERM')
      await until(async () => hub.exitCode !== null, 30_000, 'the Hub to stop').catch(() => process.kill(-hub.pid, 'SIGKILL'))
    }
    spawnSync('tmux', ['-L', 'svc', 'kill-server'], {env, stdio: 'ignore'})
    rmSync(work, {recursive: true, force: true, maxRetries: 5})
  }
  try {
    await until(() => requestJson('GET', `${url}/healthz`).then(() => true), 60_000, 'the Hub').catch((err) => {
      throw new Error(`${err.message}\n${readFileSync(logFile, 'utf8').slice(-4000)}`)
    })
    const devToken = await until(async () => readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim(), 30_000, 'the dev token')
    const api = (method, path, body, token = devToken) => requestJson(method, `${url}/api/v1${path}`, {token, body})
    await until(async () => (await api('GET', '/brokers')).brokers.some((b) => b.colocated && b.connected), 30_000, 'the co-located broker')
    const {project} = await api('POST', '/projects/register', {name: 'bench', localPath: checkout})
    return {pid: hub.pid, url, home, env, api, project, stop}
  } catch (err) {
    await stop()
    throw err
  }
}

async function fanout() {
  const hub = await startHub()
  const {api, project, env} = hub
  try {
    const {agent: lead} = await api('POST', '/agents', {name: 'lead', projectId: project.id, harnessConfig: 'shell'})
    // The lead's own token, as its shell has it (a file in its HOME, named by its environment).
    const pid = execFileSync('tmux', ['-L', 'svc', 'display-message', '-p', '-t', `=svc-${lead.id}:`, '#{pane_pid}'], {env, encoding: 'utf8'}).trim()
    const leadToken = await until(async () => {
      const vars = Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]))
      return vars.SVC_AUTH_TOKEN || (vars.SVC_AUTH_TOKEN_FILE && readFileSync(vars.SVC_AUTH_TOKEN_FILE.startsWith('/') ? vars.SVC_AUTH_TOKEN_FILE : join(vars.HOME, vars.SVC_AUTH_TOKEN_FILE), 'utf8').trim())
    }, 10_000, "the lead's token")
    out(`teams bench (fan-out): ${CHILDREN} shell children of a shell lead, created at once with the lead's token; node ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0].toFixed(1)}`)
    const times = []
    const growth = []
    for (let run = 0; run < RUNS; run++) {
      await sleep(1000)
      const before = treeRssKb(hub.pid, NOT_HUB)
      const start = Date.now()
      // Each create answers once its child is dispatched (running): when each answered shows whether the starts overlap.
      const answered = []
      const made = await Promise.all(Array.from({length: CHILDREN}, (_, i) => api('POST', '/agents', {name: `c${run}-${i}`, projectId: project.id, harnessConfig: 'shell'}, leadToken).then((r) => (answered.push(Date.now() - start), r.agent))))
      if (made.some((c) => c.parent?.id !== lead.id)) throw new Error('a child was not made under the lead')
      const ids = new Set(made.map((c) => c.id))
      await until(async () => (await api('GET', `/agents?projectId=${project.id}`)).agents.filter((a) => ids.has(a.id) && a.phase === 'running').length === CHILDREN, 120_000, 'all children running', 25)
      times.push(Date.now() - start)
      // Where the time went: each child's start marks (parts/agent-start-marks.mjs) from the first create.
      const marks = made.map((c) => {
        const pane = spawnSync('tmux', ['-L', 'svc', 'display-message', '-p', '-t', `=svc-${c.id}:`, '#{pane_pid}'], {env, encoding: 'utf8'}).stdout.trim()
        return startMarks(join(hub.home, '.svc', 'broker'), c.id, Number(pane), undefined, undefined)
      })
      const span = (k) => {
        const xs = marks.map((m) => m[k] - start).filter(Number.isFinite).sort((a, b) => a - b)
        return xs.length ? `${xs[0].toFixed(0)}..${xs.at(-1).toFixed(0)}` : '-'
      }
      // Each child's own steps (median over the children): overlapping starts show as steps shorter than the span.
      const step = (from, to) => {
        const xs = marks.map((m) => m[to] - m[from]).filter(Number.isFinite)
        return xs.length ? median(xs).toFixed(0) : '-'
      }
      out(`    from the first create (first..last child, ms): repository born ${span('repository')}, record ${span('record')}, tmux log ${span('tmux')}, session process ${span('session')}`)
      out(`    each child's steps (median ms): repository (git) ${step('repository', 'record')}, HOME + sandbox prep ${step('record', 'tmux')}, tmux new-session ${step('tmux', 'session')}`)
      await sleep(1000)
      growth.push((treeRssKb(hub.pid, NOT_HUB) - before) / CHILDREN / 1024)
      out(`  run ${run + 1}: ${times.at(-1)} ms to all ${CHILDREN} running (creates answered at ${answered.join(', ')} ms); Hub+broker RSS ${(before / 1024).toFixed(1)} MB before, +${growth.at(-1).toFixed(2)} MB per child`)
      for (const c of made) await api('DELETE', `/agents/${c.id}`).catch(() => {})
    }
    const m = median(times)
    out(`fan-out: median ${m} ms from the first create to all ${CHILDREN} running (target <= 5000 ms: ${verdict(m <= 5000)}), load ${loadavg()[0].toFixed(1)}`)
    const g = median(growth)
    out(`fan-out: Hub+broker RSS growth median ${g.toFixed(2)} MB per agent (target < 2 MB: ${verdict(g < 2)})`)
  } finally {
    await hub.stop()
  }
}

async function tree() {
  register()
  const {openStore} = await import('../../src/store/store.ts')
  const {newId} = await import('../../src/domain/shared/secrets.ts')
  const hub = await startHub()
  try {
    const store = await openStore({driver: 'sqlite', url: join(hub.home, '.svc', 'hub.db')})
    const t = new Date().toISOString()
    let parents = [null]
    let root
    let n = 0
    try {
      for (const size of LEVELS) {
        const level = []
        for (let i = 0; i < size; i++) {
          const parent = parents[i % parents.length]
          const agent = {id: newId(), name: `a${n++}`}
          await store.agents.insert({...agent, projectId: hub.project.id, brokerId: null, phase: 'stopped', activity: null, detail: '', harnessConfig: 'shell', template: null, task: null, role: 'baseline', runtime: null, runtimeRef: null, config: {}, error: null, createdBy: {kind: 'user', id: 'dev-user'}, createdAt: t, updatedAt: t, parent})
          level.push(agent)
        }
        root ??= level[0]
        parents = level
      }
    } finally {
      await store.close()
    }
    const get = () => hub.api('GET', `/agents/${root.id}/tree`)
    const first = await get()
    if (first.totals.agents !== n) throw new Error(`the tree has ${first.totals.agents} agents, not ${n}`)
    const times = []
    // /proc counts CPU in 10 ms ticks: the Hub's CPU is taken over all the requests, then divided.
    const cpuBefore = cpuMs(hub.pid)
    for (let i = 0; i < TREE_RUNS; i++) {
      const s = process.hrtime.bigint()
      await get()
      times.push(Number(process.hrtime.bigint() - s) / 1e6)
    }
    const cpu = (cpuMs(hub.pid) - cpuBefore) / TREE_RUNS
    const m = median(times)
    out(`tree: GET /api/v1/agents/:root/tree on ${n} agents in ${LEVELS.length} levels (SQLite, ${(JSON.stringify(first).length / 1024).toFixed(0)} KiB answer): median ${m.toFixed(1)} ms of ${TREE_RUNS} (min ${Math.min(...times).toFixed(1)}), the Hub's CPU ${cpu.toFixed(1)} ms a request, load ${loadavg()[0].toFixed(1)} (target < 50 ms: ${verdict(m < 50)})`)
  } finally {
    await hub.stop()
  }
}

if (PARTS.has('fanout')) await fanout()
if (PARTS.has('tree')) await tree()
process.exit(0)
