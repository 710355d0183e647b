// Helpers shared by the bench scripts.
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import {createServer} from 'node:net'
import {join} from 'node:path'

/** A TCP port free on loopback right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address()
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

/** CPU time (user + system, all threads) a process has used, in ms, from /proc (Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/** The 1-minute load average (Linux), printed beside timings taken on a shared machine. */
export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]

/**
 * An HTTP request whose answer is JSON (or empty); a status of 400 or more rejects with the
 * answer's text. A plain object body is sent as JSON; a string or Buffer as it is.
 */
export function requestJson(method, url, {token, body, headers = {}, agent} = {}) {
  const json = body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)
  const payload = json ? JSON.stringify(body) : body
  return new Promise((resolve, reject) => {
    const req = http.request(url, {agent, method, headers: {...headers, ...(json && {'content-type': 'application/json'}), ...(token && {authorization: `Bearer ${token}`})}}, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        if (res.statusCode >= 400) return reject(new Error(`${method} ${url}: ${res.statusCode} ${text}`))
        resolve(text ? JSON.parse(text) : null)
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** Polls `fn` until it returns something truthy (a throw counts as not yet); rejects after `timeoutMs`. */
export async function until(fn, timeoutMs, what, everyMs = 25) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const v = await fn()
      if (v) return v
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/**
 * Resident memory (kB) of a process and its descendants, from /proc, leaving out the processes
 * whose name matches `skip` (and what runs under them): tmux, the agents' shells and harnesses.
 */
export function treeRssKb(pid, skip = /^(tmux|bash|sh|git)/) {
  const children = new Map()
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)])
    } catch {
      // gone meanwhile
    }
  }
  let total = 0
  const walk = (p) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8')
      if (skip.test(/^Name:\s*(\S+)/m.exec(status)?.[1] ?? '')) return
      total += Number(/^VmRSS:\s*(\d+)/m.exec(status)?.[1] ?? 0)
    } catch {
      return
    }
    for (const c of children.get(p) ?? []) walk(c)
  }
  walk(pid)
  return total
}

/**
 * The environment of a workstation Hub a bench starts in a temp HOME: this process's, without
 * svc's variables, NODE_EXTRA_CA_CERTS and NODE_OPTIONS (they slow every Node start) and TMUX
 * (inside a tmux session it would point tmux at that server, not TMUX_TMPDIR's); the harness CLIs
 * of node_modules/.bin on PATH, no container engine, a git identity.
 */
export function workstationEnv(root, {home, tmuxDir}) {
  const env = {}
  const dropped = new Set(['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'TMUX', 'TMUX_PANE'])
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && !dropped.has(k)) env[k] = v
  return Object.assign(env, {HOME: home, TMUX_TMPDIR: tmuxDir, NO_COLOR: '1', PATH: `${root}node_modules/.bin:${process.env.PATH}`, DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock', GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com'})
}

/** Makes `dir` a git checkout on `main` with one commit (a README), as a project to register. */
export function initCheckout(dir, env) {
  const git = (...args) => execFileSync('git', args, {cwd: dir, env, stdio: 'ignore'})
  git('init', '-q', '-b', 'main')
  writeFileSync(join(dir, 'README.md'), '# bench\n')
  git('add', '-A')
  git('commit', '-q', '-m', 'init')
}

/**
 * A local-runtime agent's token, from the file its svc reads (SVC_AUTH_TOKEN_FILE), which the
 * co-located broker writes into the agent's HOME on the host before its harness starts
 * (<HOME>/.svc/broker/homes/<id>/.svc/agent-token). Not from the pane's environment: a sandboxed
 * pane's process is bwrap, started from an empty one.
 */
export async function agentTokenOf(home, agentId, timeoutMs = 30_000) {
  const file = join(home, '.svc', 'broker', 'homes', agentId, '.svc', 'agent-token')
  return until(() => (existsSync(file) ? readFileSync(file, 'utf8').trim() : ''), timeoutMs, `the agent token in ${file}`)
}
