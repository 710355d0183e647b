import {tmpdir} from 'node:os'
import {spawn, type ChildProcess} from 'node:child_process'
import {createServer} from 'node:net'
import {fileURLToPath} from 'node:url'

export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
  /** stdout parsed as JSON when it is JSON. */
  json: any
}

/** Environment for a spawned svc: a given HOME, no inherited svc variables, no colour. */
export function cliEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && k !== 'NODE_EXTRA_CA_CERTS') env[k] = v
  return {...env, HOME: home, NO_COLOR: '1', ...extra}
}

/** Runs `svc <args>` to completion. */
export function runCli(args: string[], opts: {env: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // Never the repository itself: run in a checkout, `svc project register` would link it.
    const child = spawn(process.execPath, [BIN, ...args], {env: opts.env, cwd: opts.cwd ?? tmpdir(), stdio: ['pipe', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      let json: unknown
      try {
        json = JSON.parse(stdout)
      } catch {
        json = undefined
      }
      resolve({code, stdout, stderr, json})
    })
    child.stdin.end(opts.input ?? '')
  })
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as {port: number}).port
      srv.close(() => resolve(port))
    })
    srv.on('error', reject)
  })
}

export interface RunningServer {
  child: ChildProcess
  url: string
  port: number
  stderr: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Spawns `svc server start` and waits until /healthz answers. The limit is a liveness bound on a
 * shared, loaded machine (just under the 60 s hook timeout), not a performance target.
 */
export async function startServerProcess(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 55_000, opts: {port?: number} = {}): Promise<RunningServer> {
  // A given port lets a test restart a Hub where its brokers and agents expect it.
  const port = opts.port ?? (await freePort())
  const child = spawn(process.execPath, [BIN, 'server', 'start', '--port', String(port), ...args], {env, stdio: ['ignore', 'pipe', 'pipe']})
  let err = ''
  child.stderr!.on('data', (d) => (err += d))
  child.stdout!.on('data', () => {})
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${err}`)
    try {
      const {requestJson} = await import('../../src/client/http.js')
      await requestJson('GET', `${url}/healthz`, {timeoutMs: 1000})
      break
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL')
        throw new Error(`server did not answer /healthz within ${timeoutMs} ms: ${err}`)
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return {
    child,
    url,
    port,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
  }
}

/**
 * A workstation `svc server start` whose agents run on the local (tmux) runtime: no container
 * engine answers (so the default runtime falls through to local), tmux sockets live under
 * `tmuxDir`, the co-located broker listens on a free port. `serverEnv` restarts it;
 * `env` adds SVC_HUB_ENDPOINT for `runCli`.
 */
export async function startLocalRuntimeServer(home: string, tmuxDir: string, extra: Record<string, string> = {}): Promise<{server: RunningServer; serverEnv: NodeJS.ProcessEnv; env: NodeJS.ProcessEnv}> {
  const serverEnv = cliEnv(home, {
    ...extra,
    TMUX_TMPDIR: tmuxDir,
    SVC_SERVER_BROKER_PORT: String(await freePort()),
    // The test names its runtime: the engines of the machine must not decide.
    SVC_SERVER_BROKER_RUNTIME: 'local',
    DOCKER_HOST: 'unix:///nonexistent/docker.sock',
    CONTAINER_HOST: 'unix:///nonexistent/podman.sock',
  })
  const server = await startServerProcess([], serverEnv, 60_000)
  return {server, serverEnv, env: {...serverEnv, SVC_HUB_ENDPOINT: server.url}}
}
