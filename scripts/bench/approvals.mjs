// Approvals benchmark (issue 28): a workstation Hub (`svc server start`, SQLite, its co-located
// broker on the local tmux runtime, private TMUX_TMPDIR) in a temp HOME with N `shell` agents
// (BENCH_AGENTS, 10). For each agent a real hook process (`svc hook claude PermissionRequest`,
// the agent's own token and env, Claude Code's payload on stdin) asks the Hub for an approval
// and waits, as Claude Code's hook does; with all N waiting, each is allowed in turn through
// `POST /api/v1/approvals/:id/decision`, and the time from the decision being sent to the hook
// printing its answer (the moment Claude Code would run the tool) is measured. Rounds:
// BENCH_ROUNDS (3). Prints median and p99 against the targets (<= 300 ms, <= 1 s); never asserts.
// What it leaves out: Claude Code's own time from the hook's answer to the tool running.
import {execFileSync, spawn} from 'node:child_process'
import {mkdtempSync, openSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {freePort, loadAverage, requestJson as request} from './lib.mjs'

/** Polls `fn` until it returns something truthy (a throw counts as not yet); rejects after `timeoutMs`. */
async function until(fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await Promise.resolve().then(fn).catch(() => undefined)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const AGENTS = Number(process.env.BENCH_AGENTS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

const home = mkdtempSync(join(tmpdir(), 'svc-bench-approvals-'))
const tmux = mkdtempSync(join(tmpdir(), 'svc-bench-tmux-'))
const children = []
const tmuxEnv = {...process.env, TMUX_TMPDIR: tmux}
delete tmuxEnv.TMUX
const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
try {
  const [hubPort, brokerPort] = await Promise.all([freePort(), freePort()])
  const env = {...process.env, HOME: home, TMUX_TMPDIR: tmux, SVC_SERVER_BROKER_PORT: String(brokerPort), DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock'}
  for (const k of Object.keys(env)) if (k.startsWith('SVC_') && k !== 'SVC_SERVER_BROKER_PORT') delete env[k]
  const logFile = join(home, 'hub.log')
  const hub = spawn(process.execPath, [join(ROOT, 'bin/run.js'), 'server', 'start', '--port', String(hubPort)], {env, stdio: ['ignore', 'ignore', openSync(logFile, 'w')]})
  children.push(hub)
  const hubUrl = `http://127.0.0.1:${hubPort}`
  await until(async () => (await request('GET', `${hubUrl}/healthz`).then(() => true, () => false)) || undefined, 60_000, 'the Hub')
  const devToken = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
  await until(async () => (await request('GET', `${hubUrl}/api/v1/brokers`, {token: devToken})).brokers.some((b) => b.colocated && b.connected) || undefined, 30_000, 'the co-located broker')
  const agents = []
  for (let i = 0; i < AGENTS; i++) {
    const {agent} = await request('POST', `${hubUrl}/api/v1/agents`, {token: devToken, body: {name: `bench-${i}`, projectId: 'default', harnessConfig: 'shell'}})
    // The agent's token as its harness process has it (the local runtime does not leave it in tmux).
    const pid = execFileSync('tmux', ['-L', 'svc', 'display-message', '-p', '-t', `=svc-${agent.id}:`, '#{pane_pid}'], {env: tmuxEnv, encoding: 'utf8'}).trim()
    const token = await until(() => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('SVC_AUTH_TOKEN='))?.slice(15), 10_000, 'the agent token')
    agents.push({id: agent.id, token})
  }
  const hookEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')))
  const samples = []
  for (let round = 0; round < ROUNDS; round++) {
    // Every agent's hook asks and waits.
    const hooks = agents.map((a) => {
      const child = spawn(process.execPath, [join(ROOT, 'bin/run.js'), 'hook', 'claude', 'PermissionRequest'], {env: {...hookEnv, SVC_HUB_ENDPOINT: hubUrl, SVC_AGENT_ID: a.id, SVC_AUTH_TOKEN: a.token}, stdio: ['pipe', 'pipe', 'inherit']})
      children.push(child)
      const answered = new Promise((resolve) => child.stdout.once('data', () => resolve(performance.now())))
      child.stdin.end(JSON.stringify({hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: {command: `echo round ${round}`}}))
      return {agent: a, child, answered}
    })
    const pending = await until(async () => {
      const {approvals} = await request('GET', `${hubUrl}/api/v1/approvals?state=pending`, {token: devToken})
      return approvals.length >= AGENTS ? approvals : undefined
    }, 60_000, `${AGENTS} pending approvals`)
    for (const h of hooks) {
      const approval = pending.find((p) => p.agentId === h.agent.id)
      const sent = performance.now()
      await request('POST', `${hubUrl}/api/v1/approvals/${approval.id}/decision`, {token: devToken, body: {decision: 'allow'}})
      samples.push((await h.answered) - sent)
      await new Promise((r) => h.child.once('exit', r))
    }
  }
  const median = pct(samples, 50)
  const p99 = pct(samples, 99)
  process.stdout.write(`approvals: ${AGENTS} hooks waiting, ${samples.length} decisions; decision -> hook answer: median ${median.toFixed(0)} ms (target <= 300), p99 ${p99.toFixed(0)} ms (target <= 1000); load ${loadAverage()}\n`)
} finally {
  for (const c of children) {
    if (c.exitCode === null) {
      c.kill('SIGTERM')
      await new Promise((r) => c.once('exit', r))
    }
  }
  try {
    execFileSync('tmux', ['-L', 'svc', 'kill-server'], {env: tmuxEnv, stdio: 'ignore'})
  } catch {
    // no server left
  }
  rmSync(home, {recursive: true, force: true})
  rmSync(tmux, {recursive: true, force: true})
}
