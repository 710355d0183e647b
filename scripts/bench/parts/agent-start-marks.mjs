// How an agent's start is split in steps for `npm run bench -- agents` (part 1), from what each
// step leaves behind: no tracing in svc itself.
import {existsSync, readFileSync, readdirSync, readlinkSync, statSync} from 'node:fs'
import http from 'node:http'
import {join} from 'node:path'

/** Each process's parent, from /proc. */
function parents() {
  const byPid = new Map()
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      byPid.set(Number(d), {ppid: Number(stat.split(') ')[1].split(' ')[1]), stat})
    } catch {
      // gone meanwhile
    }
  }
  return byPid
}

/**
 * When the process named `name` under `rootPid` (null: `rootPid` itself) was started, as epoch ms (from its start time in
 * clock ticks after boot, /proc/<pid>/stat field 22; 100 ticks a second here), or undefined.
 */
export function processStartedAt(rootPid, name) {
  const procs = parents()
  const bootMs = Date.now() - Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000
  const under = (pid) => {
    for (let p = pid; p > 1; p = procs.get(p)?.ppid ?? 0) if (p === rootPid) return true
    return false
  }
  for (const [pid, {stat}] of procs) {
    if (!under(pid) || (name === null ? pid !== rootPid : !stat.includes(`(${name})`))) continue
    return bootMs + Number(stat.split(') ')[1].split(' ')[19]) * 10
  }
  return undefined
}

/**
 * When each step of an agent's start began, as epoch ms, from what it leaves behind (no tracing
 * in svc itself): the CLI's request reaching a loopback relay in front of the Hub, the birth of
 * the agent's repository (its git directory), its record (written when the repository is complete), the
 * tmux log file (made just before `tmux new-session`), the start of the session's process (/proc,
 * 10 ms clock), and the moment Claude Code's program replaced the launcher chain in that process
 * tree (seen by watchExec).
 */
export function startMarks(stateDir, agentId, panePid, requestAt, harnessAt) {
  const born = (p) => (existsSync(p) ? statSync(p).birthtimeMs : NaN)
  const changed = (p) => (existsSync(p) ? statSync(p).mtimeMs : NaN)
  return {
    request: requestAt ?? NaN,
    repository: born(join(stateDir, 'repos', `${agentId}.git`)),
    record: changed(join(stateDir, 'repos', `${agentId}.json`)),
    tmux: born(join(stateDir, 'logs', `svc-${agentId}.log`)),
    session: processStartedAt(panePid, null) ?? NaN,
    harness: harnessAt ?? NaN,
  }
}

/** The steps between the marks (startMarks), in order, named for what runs in them. */
export const START_STEPS = [
  ['CLI start (spawn to its request at the Hub)', 'spawn', 'request'],
  // The agent's repository is made while git checks the checkout (src/broker/workspace/repository.ts,
  // fromCheckout), so the checks are in the second of these two steps, not the first.
  ['Hub, broker tunnel (to the repository made)', 'request', 'repository'],
  ["checkout checks with the agent's repository (to its record)", 'repository', 'record'],
  ['HOME, harness config, sandbox prep', 'record', 'tmux'],
  ['tmux new-session', 'tmux', 'session'],
  ['env file, bwrap, network forwarders, nice', 'session', 'harness'],
]

/**
 * Watches for the exec of Claude Code under a broker's work trees: a process's start time in
 * /proc is its fork (the launcher chain bwrap, sh, nice execs in place), so the moment `claude`
 * replaced it is seen by looking, every 2 ms, at the program name of each new process whose
 * working directory is an agent's work tree. Answers {stop(): epoch ms of the first seen, or undefined}.
 */
export function watchExec(workspacesDir, minPid) {
  const candidates = new Set()
  const dropped = new Set()
  let seenAt
  let timer
  const look = () => {
    for (const d of readdirSync('/proc')) {
      const pid = Number(d)
      if (!(pid > minPid) || candidates.has(pid) || dropped.has(pid)) continue
      try {
        if (readlinkSync(`/proc/${pid}/cwd`).startsWith(workspacesDir)) candidates.add(pid)
        else dropped.add(pid)
      } catch {
        dropped.add(pid)
      }
    }
    for (const pid of candidates) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'claude') return (seenAt = Date.now())
      } catch {
        candidates.delete(pid)
      }
    }
    timer = setTimeout(look, 2)
  }
  look()
  return {
    stop: () => (clearTimeout(timer), seenAt),
    seen: () => seenAt,
  }
}

/** A relay in front of the Hub that notes when each `POST /api/v1/agents` arrives. */
export async function requestRelay(hubUrl) {
  const arrivals = []
  const target = new URL(hubUrl)
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/api/v1/agents') arrivals.push(Date.now())
    const up = http.request({host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers}, (r) => {
      res.writeHead(r.statusCode, r.headers)
      r.pipe(res)
    })
    up.on('error', (err) => res.destroy(err))
    req.pipe(up)
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return {url: `http://127.0.0.1:${server.address().port}`, arrivals, close: () => new Promise((r) => server.close(r))}
}

/**
 * CPU time (ms, 10 ms ticks) a process used, from /proc/<pid>/stat: its own (utime, stime) and,
 * with `children`, that of its children it has waited for (cutime, cstime): for the bench itself
 * that is the CLI it ran; for the Hub, its git and tmux processes. CPU moves much less with the
 * machine's load than wall time does.
 */
export function cpuMs(pid, {children = true, own = true} = {}) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  // Fields 14-17 of stat(5), counted from the state field (3) after the command name.
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(f[i]))
  return ((own ? utime + stime : 0) + (children ? cutime + cstime : 0)) * 10
}

/**
 * cpuMs of the Hub with its live child processes (own and reaped children's time): svc's process
 * spawner (src/broker/runtimes/spawner.ts) runs the Hub's git and tmux, whose time is counted in
 * the spawner's, not the Hub's, until the spawner exits.
 */
export function hubCpuMs(pid) {
  let total = cpuMs(pid)
  for (const [child, {ppid}] of parents()) {
    if (ppid !== pid) continue
    try {
      total += cpuMs(child)
    } catch {
      // gone meanwhile: its time is in the Hub's own count once reaped
    }
  }
  return total
}
