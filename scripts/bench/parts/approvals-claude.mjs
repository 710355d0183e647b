// Approvals with real Claude Code (a part of `npm run bench -- approvals`; not a bench of its own:
// the dispatcher lists only scripts/bench/*.mjs). AGENTS `claude` agents on a running Hub, each
// scripted (the test suite's Anthropic server) to run ROUNDS Bash commands in turn, each command
// `date +%s%N > ran-<round>.txt`: the command itself writes when it started, in ns, on the
// machine's realtime clock. Each round waits until all AGENTS approvals are pending (every Claude
// Code waiting in its PermissionRequest hook at once), then allows each in turn through
// `POST /api/v1/approvals/:id/decision` and measures from the decision being sent (Date.now(),
// the same clock) to the command's start. Split per sample: the decision route's answer; the
// hook learning the decision (its SVC_HOOK_TRACE line, written as its long-poll returned); from
// there to the command (the hook printing and exiting, Claude Code reading its answer, its Bash
// tool's shell starting the command). And the CPU Claude Code's process tree spent from the
// decision to the command (/proc: its own, its live descendants' and its reaped children's, so a
// hook that exits in between counts once): on a machine with C cores, N such decisions at once
// take at least N * cpu / C of wall time whatever svc does. `decide`: 'burst' sends the
// decisions back to back, 'one' sends each once the previous command started (BENCH_DECIDE).
// Printed, never asserted.
import {copyFileSync, existsSync, readdirSync, readFileSync, readlinkSync} from 'node:fs'
import {join} from 'node:path'
import {until} from '../lib.mjs'

const sorted = (xs) => [...xs].sort((a, b) => a - b)
const pct = (xs, p) => (xs.length ? sorted(xs)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] : NaN)
const ms = (x) => `${Number.isFinite(x) ? x.toFixed(0) : '-'} ms`
const verdict = (ok) => (ok ? 'met' : 'MISSED')
const ROUND_FILE = (round) => `ran-${round}.txt`

/** The scripted conversation: ROUNDS Bash calls, one per model turn, then a closing answer. */
export function approvalsScript(rounds) {
  return (body) => {
    const done = (JSON.stringify(body.messages ?? []).match(/"type":"tool_result"/g) ?? []).length
    if (done >= rounds) return {text: 'Done.'}
    return {tool: {name: 'Bash', input: {command: `date +%s%N > ${ROUND_FILE(done)}`, description: `write round ${done}'s start time`}}}
  }
}

/** Every process's [ppid, own CPU ms, reaped children's CPU ms], from /proc (CLK_TCK 100). */
function processTable() {
  const table = new Map()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // After the command's name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
      table.set(Number(d), [Number(f[1]), (Number(f[11]) + Number(f[12])) * 10, (Number(f[13]) + Number(f[14])) * 10])
    } catch {
      // gone meanwhile
    }
  }
  return table
}

/** CPU ms of `pid` and its descendants, live and reaped. */
function treeCpu(pid, table = processTable()) {
  let total = 0
  const todo = [pid]
  while (todo.length) {
    const p = todo.pop()
    const row = table.get(p)
    if (!row) continue
    total += row[1] + row[2]
    for (const [child, r] of table) if (r[0] === p) todo.push(child)
  }
  return total
}

/** The Claude Code process working in `dir` (its cwd), found in /proc. */
function claudePid(dir) {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      if (readlinkSync(`/proc/${d}/cwd`) === dir && readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')[0].endsWith('claude')) return Number(d)
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined
}

/** The hook's trace line for `approvalId` (the decision as its long-poll learned it), if written. */
function hookLearned(tracePath, approvalId) {
  if (!existsSync(tracePath)) return undefined
  for (const line of readFileSync(tracePath, 'utf8').split('\n')) {
    if (!line.includes(approvalId)) continue
    try {
      const t = JSON.parse(line)
      if (t.approval === approvalId) return t
    } catch {
      // a line being written
    }
  }
  return undefined
}

/** Claude Code's debug log lines that mark each permission answer's way to the tool, in order. */
const STEPS = [
  ['Claude Code read the answer', /Hooks: Checking first line for async: .*PermissionRequest/],
  ['the hook process ended', /Hook PermissionRequest:\S+ \(PermissionRequest\) success/],
  ['the tool dispatched', /tool_dispatch_start tool=Bash/],
  ['its shell spawned', /Spawning shell/],
]

/** With Claude Code's debug logs: each step from the hook learning the decision to the command, by round. */
function claudeSteps(samples, log, out) {
  const steps = STEPS.map(() => [])
  const last = []
  for (const s of samples) {
    if (!Number.isFinite(s.learnedAt) || !existsSync(join(s.agent.dir, log))) continue
    const lines = readFileSync(join(s.agent.dir, log), 'utf8').split('\n')
    const at = STEPS.map(([, re]) => lines.filter((l) => re.test(l)).map((l) => Date.parse(l.slice(0, 24)))[s.round])
    if (at.some((x) => !Number.isFinite(x))) continue
    let prev = s.learnedAt
    at.forEach((x, k) => {
      steps[k].push(x - prev)
      prev = x
    })
    last.push(s.ran - prev)
  }
  out(`  Claude Code's part, step by step (its debug log, ms clock; each from the step before, the first from the hook learning it):`)
  STEPS.forEach(([name], k) => out(`    ${name.padEnd(46)} n=${steps[k].length}  p50 ${ms(pct(steps[k], 50))}  p99 ${ms(pct(steps[k], 99))}`))
  out(`    ${'the command started'.padEnd(46)} n=${last.length}  p50 ${ms(pct(last, 50))}  p99 ${ms(pct(last, 99))}`)
}

/**
 * Runs the part on a Hub whose `claude` harness config points at `model` and sets
 * SVC_HOOK_TRACE to `trace` (a path relative to each agent's work tree).
 */
export async function claudeApprovalsPart({api, project, model, trace, debug, agents: count, rounds, removeAgent, out, load, decide = 'burst'}) {
  model.respond(approvalsScript(rounds))
  const agents = []
  const samples = []
  const missed = []
  try {
    for (let i = 0; i < count; i++) {
      const {agent} = await api('POST', '/agents', {name: `appr${i}`, projectId: project.id, harnessConfig: 'claude', task: `run the round commands (${i})`})
      agents.push({id: agent.id, dir: agent.workspace.path})
    }
    const ids = new Set(agents.map((a) => a.id))
    for (let round = 0; round < rounds; round++) {
      const file = ROUND_FILE(round)
      const pending = await until(async () => {
        const {approvals} = await api('GET', '/approvals?state=pending')
        const mine = approvals.filter((a) => ids.has(a.agentId) && a.summary.includes(file))
        return mine.length === count ? mine : undefined
      }, 300_000, `${count} pending approvals of round ${round}`, 50)
      const loadAt = load()
      const sent = []
      // Each agent's Claude Code tree CPU before the decisions (one /proc read, so reading it
      // delays no decision), then when its command has started (a watcher per agent, 20 ms polls:
      // the first sight of the file). Claude Code idles at its dialog meanwhile.
      const cpuAt = new Map()
      for (const a of agents) a.pid ??= claudePid(a.dir)
      const table = processTable()
      for (const a of agents) if (a.pid) cpuAt.set(a.id, treeCpu(a.pid, table))
      const watchers = new Map(
        agents.map((a) => [
          a.id,
          until(async () => existsSync(join(a.dir, file)) || undefined, 120_000, `${file} of ${a.id}`, 20).then(
            () => (a.pid ? treeCpu(a.pid) : NaN),
            () => NaN,
          ),
        ]),
      )
      // burst: each as soon as the previous decision was answered (ten Claude Codes then start
      // their commands at once). one: each once the previous allowed command has started, the
      // others still waiting in their hooks (a person deciding one request at a time).
      for (const approval of pending) {
        const at = Date.now()
        await api('POST', `/approvals/${approval.id}/decision`, {decision: 'allow'})
        sent.push({approval, at, answered: Date.now()})
        if (decide === 'one') await watchers.get(approval.agentId)
      }
      for (const s of sent) {
        const agent = agents.find((a) => a.id === s.approval.agentId)
        const cpu = (await watchers.get(agent.id)) - (cpuAt.get(agent.id) ?? NaN)
        const ns = await until(async () => readFileSync(join(agent.dir, file), 'utf8').trim(), 120_000, `${file} of ${agent.id}`, 20).catch(() => null)
        const learned = hookLearned(join(agent.dir, trace), s.approval.id)
        if (ns === null) {
          // Allowed on the Hub, never run: the hook had stopped waiting (its trace tells).
          missed.push(`${agent.id} round ${round}: ${learned ? `the hook learned ${learned.state}` : 'no hook learned the decision'}`)
          continue
        }
        const ran = Number(BigInt(ns) / 1000n) / 1000
        samples.push({agent, round, ran, cpu, learnedAt: learned?.answeredAt, total: ran - s.at, route: s.answered - s.at, hook: learned ? learned.answeredAt - s.at : NaN, after: learned ? ran - learned.answeredAt : NaN})
      }
      if (missed.length) break
      out(`  round ${round + 1}: ${count} pending, decided; decision -> command started: median ${ms(pct(samples.slice(-count).map((s) => s.total), 50))}, max ${ms(Math.max(...samples.slice(-count).map((s) => s.total)))} (load ${loadAt})`)
    }
    if (debug) claudeSteps(samples, debug.from, out)
  } finally {
    model.respond(null)
    if (debug) {
      for (const a of agents) {
        if (existsSync(join(a.dir, debug.from))) copyFileSync(join(a.dir, debug.from), join(debug.to, `${a.id}.log`))
        if (existsSync(join(a.dir, trace))) copyFileSync(join(a.dir, trace), join(debug.to, `${a.id}.trace.jsonl`))
      }
    }
    await Promise.all(agents.map((a) => removeAgent(a.id)))
  }
  for (const m of missed) out(`  NEVER RAN within 120 s of its allow: ${m}`)
  const col = (k) => samples.map((s) => s[k]).filter(Number.isFinite)
  const row = (name, xs) => out(`    ${name.padEnd(46)} n=${xs.length}  p50 ${ms(pct(xs, 50))}  p99 ${ms(pct(xs, 99))}  max ${ms(Math.max(...xs))}`)
  out(`  where the time went (each from the decision being sent):`)
  row('the decision route answered', col('route'))
  row("the hook's long-poll returned it (svc)", col('hook'))
  row('hook answer -> command started (Claude Code)', col('after'))
  out(`  CPU of Claude Code's process tree from the decision to the command (ms; the first Bash call of a session makes its shell snapshot):`)
  row('first call of the session', samples.filter((s) => s.round === 0).map((s) => s.cpu).filter(Number.isFinite))
  row('later calls', samples.filter((s) => s.round > 0).map((s) => s.cpu).filter(Number.isFinite))
  const total = col('total')
  const [p50, p99] = [pct(total, 50), pct(total, 99)]
  out(`approvals (Claude Code): ${count} agents waiting at once, decided ${decide === 'one' ? 'one at a time (each once the previous command started)' : 'in a burst (all ten at once)'}, ${total.length} decisions; decision -> command started: median ${ms(p50)} (target <= 300 ms: ${verdict(p50 <= 300)}), p99 ${ms(p99)} (target <= 1000 ms: ${verdict(p99 <= 1000 && !missed.length)})${missed.length ? `; ${missed.length} allowed commands never ran` : ''}; load ${load()}`)
}
