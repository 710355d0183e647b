// Start-up benchmark of the single executable (dist/svc, `npm run build:binary`) and the dev
// entry (bin/run.js): medians of `node -e 0`, `svc --version`, `node bin/run.js --version`, and an
// agent's `svc status thinking` report to a running Hub, all measured in this run, interleaved,
// with NODE_EXTRA_CA_CERTS unset (it adds ~60 ms to any Node start here). Targets (issue 31;
// printed, never asserted): the executable's --version within 1.5x of `node -e 0`, the dev
// entry's within 2x, the status report within 4x.
// The Hub is the executable itself (`svc server start`) in a temp HOME, with its own TMUX_TMPDIR;
// the agent is a `--harness shell` agent on the co-located broker, and its token is the one its
// session was given (read from its environment).
// BENCH_RUNS sets the runs per command (default 20); BENCH_BIN another executable to measure.
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {agentTokenOf, freePort} from './lib.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = process.env.BENCH_BIN ?? join(ROOT, 'dist', 'svc')
const RUNS = Number(process.env.BENCH_RUNS ?? 20)

if (!existsSync(BIN)) {
  process.stderr.write(`${BIN} is missing: run \`npm run build:binary\` first\n`)
  process.exit(2)
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]


function healthy(url) {
  return new Promise((resolve) => {
    const req = http.get(`${url}/healthz`, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('error', () => resolve(false))
    req.setTimeout(1000, () => req.destroy())
  })
}

const work = mkdtempSync(join(tmpdir(), 'svc-bench-startup-'))
const home = join(work, 'home')
const tmuxDir = join(work, 'tmux')
mkdirSync(home)
mkdirSync(tmuxDir)
const env = {}
// No TMUX/TMUX_PANE: inside a tmux session they would point tmux at that server, not TMUX_TMPDIR's.
const dropped = new Set(['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'TMUX', 'TMUX_PANE'])
for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && !dropped.has(k)) env[k] = v
// No container engine: a first broker start picks docker, else podman, over local
// (default-runtime.ts); the agent must be a tmux session of the local runtime, as in the agents bench.
Object.assign(env, {HOME: home, TMUX_TMPDIR: tmuxDir, NO_COLOR: '1', DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock'})

const hubPort = await freePort()
const brokerPort = await freePort()
const hubUrl = `http://127.0.0.1:${hubPort}`
const hub = spawn(BIN, ['server', 'start', '--port', String(hubPort)], {env: {...env, SVC_SERVER_BROKER_PORT: String(brokerPort)}, stdio: ['ignore', 'ignore', 'pipe']})
let hubErr = ''
hub.stderr.on('data', (d) => (hubErr += d))

try {
  const deadline = Date.now() + 30_000
  while (!(await healthy(hubUrl))) {
    if (hub.exitCode !== null || Date.now() > deadline) throw new Error(`the Hub did not start: ${hubErr}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  const cli = (args) => JSON.parse(execFileSync(BIN, [...args, '--json'], {env: {...env, SVC_HUB_ENDPOINT: hubUrl}, cwd: work, encoding: 'utf8'}))
  const project = cli(['project', 'register', 'bench', '--no-remote']).project
  const agent = cli(['agent', 'create', 'bench-agent', '--harness', 'shell', '--project', project.id]).agent
  const token = await agentTokenOf(home, agent.id, 60_000)
  const agentEnv = {...env, SVC_AUTH_TOKEN: token, SVC_AGENT_ID: agent.id, SVC_HUB_ENDPOINT: hubUrl}

  const cases = [
    {name: 'node -e 0', cmd: process.execPath, args: ['-e', '0'], env},
    {name: 'svc --version', cmd: BIN, args: ['--version'], env},
    {name: 'node bin/run.js --version', cmd: process.execPath, args: [join(ROOT, 'bin', 'run.js'), '--version'], env},
    {name: 'svc status thinking (agent)', cmd: BIN, args: ['status', 'thinking'], env: agentEnv},
  ]
  for (const c of cases) {
    const r = spawnSync(c.cmd, c.args, {env: c.env, cwd: work, encoding: 'utf8'})
    if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`)
    c.times = []
  }
  for (let i = 0; i < RUNS; i++) {
    for (const c of cases) {
      const t0 = process.hrtime.bigint()
      spawnSync(c.cmd, c.args, {env: c.env, cwd: work, stdio: 'ignore'})
      c.times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    }
  }
  const [base, ...rest] = cases.map((c) => median(c.times))
  const targets = [1.5, 2, 4]
  const row = (name, t) => `${name.padEnd(30)} ${t.toFixed(1).padStart(7)} ms`
  console.log(`start-up, median of ${RUNS} runs (${BIN}; node ${process.version})`)
  console.log(row('node -e 0', base))
  rest.forEach((t, i) => {
    const ratio = t / base
    console.log(`${row(cases[i + 1].name, t)}   ${ratio.toFixed(2)}x node (target ${targets[i]}x: ${ratio <= targets[i] ? 'met' : 'MISSED'})`)
  })
} finally {
  hub.kill('SIGTERM')
  await new Promise((r) => (hub.exitCode !== null ? r() : hub.on('exit', r)))
  // The broker's tmux server is on its own socket (src/broker/runtimes/tmux-args.ts).
  spawnSync('tmux', ['-L', 'svc', 'kill-server'], {env, stdio: 'ignore'})
  // The agent's shell may still be writing into HOME as tmux goes down: retry, then leave it.
  for (let i = 0; ; i++) {
    try {
      rmSync(work, {recursive: true, force: true})
      break
    } catch (err) {
      if (i === 20) {
        process.stderr.write(`could not remove ${work}: ${err.message}\n`)
        break
      }
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}
