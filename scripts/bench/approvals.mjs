// Approvals benchmark (issue 28): a workstation Hub (`svc server start` in a temp HOME, SQLite, its
// co-located broker on the local tmux runtime, private TMUX_TMPDIR) with a registered checkout and
// the `claude` harness config on the test suite's scripted Anthropic server
// (test/helpers/model-servers/anthropic.ts). NODE_EXTRA_CA_CERTS is unset for everything it starts.
// Two parts (BENCH_PARTS=hook,claude picks some), BENCH_AGENTS (10) waiting at once in each:
// 1. hook: for each of N `shell` agents a real hook process (`svc hook claude PermissionRequest`,
//    the agent's own token and env, Claude Code's payload on stdin) asks the Hub for an approval
//    and waits, as Claude Code's hook does; with all N waiting, each is allowed in turn through
//    `POST /api/v1/approvals/:id/decision`, timed from the decision being sent to the hook
//    printing its answer, BENCH_ROUNDS (3) rounds. svc's part alone.
// 2. claude: N real Claude Code agents (parts/approvals-claude.mjs), each asking to run a Bash
//    command that writes its own start time; timed from the decision being sent to the command
//    starting, BENCH_ROUNDS rounds, split into svc's part and Claude Code's. BENCH_DECIDE=burst
//    sends the N decisions back to back, =one each once the previous command started.
// Targets (issue 28, for part 2): median <= 300 ms, p99 <= 1 s. Printed, never asserted.
// BENCH_HUB_NODE_ARGS passes node flags to the Hub (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {cpus, tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {register} from 'tsx/esm/api'
import {agentTokenOf, freePort, initCheckout, loadAverage, requestJson, until, workstationEnv} from './lib.mjs'
import {claudeApprovalsPart} from './parts/approvals-claude.mjs'

register()
const {startAnthropicServer} = await import('../../test/helpers/model-servers/anthropic.ts')

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PARTS = new Set((process.env.BENCH_PARTS ?? 'hook,claude').split(','))
const AGENTS = Number(process.env.BENCH_AGENTS ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
// BENCH_DECIDE=burst (default: the decisions back to back) or one (each once the previous command started).
const DECIDE = process.env.BENCH_DECIDE === 'one' ? 'one' : 'burst'
const HUB_NODE_ARGS = (process.env.BENCH_HUB_NODE_ARGS ?? '').split(' ').filter(Boolean)
const KEY = 'sk-ant-bench-key-for-the-scripted-server-0123456789'
const TRACE = '.svc-hook-trace.jsonl'
// BENCH_CLAUDE_DEBUG=<dir>: Claude Code writes its debug log (timestamped: hooks, tools) in each
// agent's work tree, copied to <dir>/<agent>.log with its hooks' trace (<agent>.trace.jsonl), to see
// where Claude Code's part goes.
const DEBUG_DIR = process.env.BENCH_CLAUDE_DEBUG
const CLAUDE_DEBUG = '.claude-debug.log'
// BENCH_NICE=<n>: the agents' niceness (`runtimes.local.nice`, 10 by default): on a machine other
// work keeps busy, Claude Code at nice 10 waits for the CPU behind it.
const NICE = process.env.BENCH_NICE

const out = (line) => process.stdout.write(`${line}\n`)
const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]

/** Part 1: N hook processes waiting at once, each allowed in turn; decision -> hook's answer. */
async function hookPart({api, project, hubUrl, env, removeAgent}) {
  const agents = []
  for (let i = 0; i < AGENTS; i++) {
    const {agent} = await api('POST', '/agents', {name: `hook-${i}`, projectId: project.id, harnessConfig: 'shell'})
    const token = await agentTokenOf(home, agent.id, 10_000)
    agents.push({id: agent.id, token})
  }
  const samples = []
  const exits = []
  const children = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Every agent's hook asks and waits.
      const hooks = agents.map((a) => {
        const child = spawn(process.execPath, [join(ROOT, 'bin/run.js'), 'hook', 'claude', 'PermissionRequest'], {env: {...env, SVC_HUB_ENDPOINT: hubUrl, SVC_AGENT_ID: a.id, SVC_AUTH_TOKEN: a.token}, stdio: ['pipe', 'pipe', 'inherit']})
        children.push(child)
        const answered = new Promise((resolve) => child.stdout.once('data', () => resolve(performance.now())))
        // Claude Code reads a hook's answer when the process ends: the exit counts too.
        const exited = new Promise((resolve) => child.once('exit', () => resolve(performance.now())))
        child.stdin.end(JSON.stringify({hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: {command: `echo round ${round}`}}))
        return {agent: a, child, answered, exited}
      })
      const pending = await until(async () => {
        const {approvals} = await api('GET', '/approvals?state=pending')
        return approvals.length >= AGENTS ? approvals : undefined
      }, 60_000, `${AGENTS} pending approvals`)
      for (const h of hooks) {
        const approval = pending.find((p) => p.agentId === h.agent.id)
        const sent = performance.now()
        await api('POST', `/approvals/${approval.id}/decision`, {decision: 'allow'})
        samples.push((await h.answered) - sent)
        exits.push((await h.exited) - sent)
      }
    }
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
    await Promise.all(agents.map((a) => removeAgent(a.id)))
  }
  out(`approvals (hook): ${AGENTS} hooks waiting, ${samples.length} decisions; decision -> hook answer: median ${pct(samples, 50).toFixed(0)} ms, p99 ${pct(samples, 99).toFixed(0)} ms, to its exit: median ${pct(exits, 50).toFixed(0)} ms, p99 ${pct(exits, 99).toFixed(0)} ms (svc's part of the 300 ms / 1 s targets); load ${loadAverage()}`)
}

const work = mkdtempSync(join(tmpdir(), 'svc-bench-approvals-'))
const home = join(work, 'home')
const tmuxDir = join(work, 'tmux')
const checkout = join(work, 'checkout')
for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d)
const env = workstationEnv(ROOT, {home, tmuxDir})
// The broker's tmux server is on its own socket (-L svc, src/broker/runtimes/tmux-args.ts).
const tmux = (...args) => spawnSync('tmux', ['-L', 'svc', ...args], {env, encoding: 'utf8'})
const model = await startAnthropicServer()
let hub
try {
  initCheckout(checkout, env)
  writeFileSync(join(home, '.svc', 'settings.yaml'), `schema_version: "1"\nharness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: ${KEY}\n      SVC_HOOK_TRACE: ${TRACE}\n${DEBUG_DIR ? `    args: [--debug-file, ${CLAUDE_DEBUG}]\n` : ''}${NICE ? `runtimes:\n  local:\n    type: local\n    nice: ${Number(NICE)}\n` : ''}`)
  const [hubPort, brokerPort] = [await freePort(), await freePort()]
  const hubUrl = `http://127.0.0.1:${hubPort}`
  const logFile = join(work, 'hub.log')
  hub = spawn(process.execPath, [...HUB_NODE_ARGS, join(ROOT, 'bin', 'run.js'), 'server', 'start', '--port', String(hubPort)], {env: {...env, SVC_SERVER_BROKER_PORT: String(brokerPort)}, stdio: ['ignore', 'ignore', openSync(logFile, 'w')], detached: true})
  const hubLog = (err) => new Error(`${err.message}\n${readFileSync(logFile, 'utf8').slice(-4000)}`)
  await until(() => requestJson('GET', `${hubUrl}/healthz`).then(() => true), 60_000, 'the Hub').catch((err) => Promise.reject(hubLog(err)))
  // Written as the Hub starts; on a loaded machine /healthz may answer first.
  const token = await until(async () => readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim(), 30_000, 'the dev token')
  const api = (method, path, body) => requestJson(method, `${hubUrl}/api/v1${path}`, {token, body})
  await until(async () => (await api('GET', '/brokers')).brokers.some((b) => b.colocated && b.connected), 30_000, 'the co-located broker').catch((err) => Promise.reject(hubLog(err)))
  const {project} = await api('POST', '/projects/register', {name: 'bench', localPath: checkout})
  const removeAgent = async (id) => {
    await api('DELETE', `/agents/${id}`).catch(() => {})
    await until(async () => tmux('has-session', '-t', `=svc-${id}`).status !== 0, 30_000, `agent ${id}'s session to end`).catch(() => {})
  }
  out(`approvals bench: Claude Code ${execFileSync('claude', ['--version'], {env, encoding: 'utf8'}).trim()}, node ${process.version}, ${cpus().length} CPUs, load ${loadAverage()}`)
  if (PARTS.has('hook')) await hookPart({api, project, hubUrl, env, removeAgent})
  if (PARTS.has('claude')) await claudeApprovalsPart({api, project, model, trace: TRACE, debug: DEBUG_DIR && {from: CLAUDE_DEBUG, to: DEBUG_DIR}, agents: AGENTS, rounds: ROUNDS, removeAgent, out, load: loadAverage, decide: DECIDE})
} finally {
  if (hub && hub.exitCode === null) {
    hub.kill('SIGTERM')
    await new Promise((r) => hub.once('exit', r))
  }
  tmux('kill-server')
  await model.close()
  rmSync(work, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
}
