import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import WebSocket from 'ws'
import {signRequest} from '../../src/api/broker-signing.js'
import {TUNNEL_PATH, type TunnelMessage} from '../../src/api/tunnel-protocol.js'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {listenHub} from '../../src/main.js'
import {SVC_TMUX_SOCKET} from '../../src/broker/runtimes/tmux-args.js'
import {startTestHub, type Dialect, type TestHub, type TestHubOptions} from './hub.js'

export interface LiveHub extends TestHub {
  /** http://127.0.0.1:<port> */
  url: string
  /** The temp TMUX_TMPDIR of this Hub's co-located broker (its own tmux server). */
  tmuxTmpdir: string
  /** The co-located broker's ID (null with `broker: false`). */
  brokerId: string | null
  /** Runs tmux against this Hub's tmux server. */
  tmux(...args: string[]): {code: number | null; stdout: string; stderr: string}
}

/**
 * Runs tmux with a given TMUX_TMPDIR (never the caller's own tmux server), on svc's own socket
 * (`-L svc`, where the local runtime keeps agents) unless `socket` is null: the default socket, a
 * user's `tmux ls`.
 */
export function tmuxAt(tmpdirPath: string, args: string[], socket: string | null = SVC_TMUX_SOCKET) {
  const env: NodeJS.ProcessEnv = {...process.env, TMUX_TMPDIR: tmpdirPath}
  delete env.TMUX
  delete env.TMUX_PANE
  const r = spawnSync('tmux', [...(socket === null ? [] : ['-L', socket]), ...args], {env, encoding: 'utf8', timeout: 10_000})
  return {code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? ''}
}

/**
 * Stops the tmux server of `tmpdirPath` and waits until it is gone: a `new-session` run while
 * the old server is still exiting connects to it and fails with "server exited unexpectedly".
 */
export async function killTmuxServer(tmpdirPath: string): Promise<void> {
  tmuxAt(tmpdirPath, ['kill-server'])
  const socket = join(tmpdirPath, `tmux-${process.getuid!()}`, SVC_TMUX_SOCKET)
  const deadline = Date.now() + 10_000
  while (existsSync(socket) && Date.now() < deadline) {
    // A socket a crashed server left behind answers "no server running" or "error connecting".
    if (/no server running|error connecting/.test(tmuxAt(tmpdirPath, ['list-sessions']).stderr)) break
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** `/proc/<pid>/environ` as a record, or undefined for a process gone meanwhile. */
function procEnv(pid: number): Record<string, string> | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/environ`, 'utf8')
  } catch {
    return undefined
  }
  const out: Record<string, string> = {}
  for (const entry of text.split('\0')) {
    const i = entry.indexOf('=')
    if (i > 0) out[entry.slice(0, i)] = entry.slice(i + 1)
  }
  return out
}

/** The children of `pid`, from /proc/<pid>/task/<tid>/children. */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (/^\d+$/.test(c)) out.push(Number(c))
    }
  } catch {
    // gone meanwhile
  }
  return out
}

/**
 * The environment of an agent's harness process on the local runtime, read from /proc: the
 * runtime passes it through a private file (a sandboxed pane: a pipe read inside bwrap) that
 * tmux never holds. The harness is the first process of the pane's tree, the pane itself first,
 * whose environment names the agent (SVC_AGENT_ID); a sandboxed pane's own process is bwrap,
 * started from an empty environment. Until the harness has its environment: the pane's.
 */
export function agentProcessEnv(tmpdirPath: string, agentId: string): Record<string, string> {
  const pid = tmuxAt(tmpdirPath, ['display-message', '-p', '-t', `=svc-${agentId}:`, '#{pane_pid}']).stdout.trim()
  if (!/^\d+$/.test(pid)) throw new Error(`no pane for agent ${agentId}`)
  const queue = [Number(pid)]
  for (let i = 0; i < queue.length && i < 200; i++) {
    const env = procEnv(queue[i])
    if (env?.SVC_AGENT_ID) return env
    queue.push(...childrenOf(queue[i]))
  }
  return procEnv(Number(pid)) ?? {}
}

/**
 * A real Hub listening on 127.0.0.1:<random> (built like `startTestHub`, then `listenHub`), with
 * its co-located broker on the local (tmux) runtime: its local API on a random port, tmux on a
 * fresh TMUX_TMPDIR. `dispose` closes the Hub, kills that tmux server and removes the dirs.
 */
export async function startLiveHub(dialect: Dialect, opts: TestHubOptions & {broker?: boolean} = {}): Promise<LiveHub> {
  const tmuxTmpdir = mkdtempSync(join(tmpdir(), 'svc-tmux-'))
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TMUX_TMPDIR: tmuxTmpdir,
    SVC_SERVER_BROKER_PORT: '0',
    // Tests name their runtime (the machine's engines must not decide), and no probe runs.
    SVC_SERVER_BROKER_RUNTIME: 'local',
    DOCKER_HOST: 'unix:///nonexistent/docker.sock',
    CONTAINER_HOST: 'unix:///nonexistent/podman.sock',
    ...opts.env,
  }
  // A variable given as undefined is removed (a test on a real engine must not get CONTAINER_HOST).
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k]
  const hub = await startTestHub(dialect, {...opts, env: env as Record<string, string>})
  const flags = {port: 0, ...opts.flags}
  const bootstrap = resolveBootstrap(flags, hub.env)
  if (opts.broker === false) bootstrap.values['server.broker.enabled'] = false
  let url: string
  try {
    url = await listenHub(hub, bootstrap)
  } catch (err) {
    await hub.dispose()
    throw err
  }
  const live: LiveHub = Object.assign(hub, {
    url,
    tmuxTmpdir,
    brokerId: hub.colocated?.broker.opts.brokerId ?? null,
    tmux: (...args: string[]) => tmuxAt(tmuxTmpdir, args),
  })
  const dispose = hub.dispose
  live.dispose = async () => {
    try {
      await dispose()
    } finally {
      tmuxAt(tmuxTmpdir, ['kill-server'])
      rmSync(tmuxTmpdir, {recursive: true, force: true})
    }
  }
  return live
}

/** Polls `fn` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v) return v as NonNullable<T>
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/**
 * A hand-driven broker tunnel: opens the signed WebSocket as a broker would and records every
 * message the Hub sends; `answer` decides each request's result.
 */
export class FakeBroker {
  readonly received: TunnelMessage[] = []
  ws!: WebSocket
  answer: (method: string, params: any) => unknown = () => ({runtime: 'local', ref: 'svc-fake'})

  constructor(
    readonly hubUrl: string,
    readonly brokerId: string,
    readonly secret: string,
  ) {}

  async connect(hello: {agents?: string[]; capabilities?: string[]; workspaces?: string[]; runtimes?: string[]} = {}): Promise<void> {
    const url = new URL(TUNNEL_PATH, this.hubUrl)
    url.protocol = 'ws:'
    this.ws = new WebSocket(url, {headers: signRequest(this.brokerId, this.secret, 'GET', TUNNEL_PATH, '')})
    this.ws.on('message', (raw) => {
      const msg = JSON.parse(raw.toString()) as TunnelMessage
      this.received.push(msg)
      if (msg.t === 'req') {
        Promise.resolve()
          .then(() => this.answer(msg.method, msg.params))
          .then(
            (result) => this.send({t: 'res', id: msg.id, ok: true, result: result ?? null}),
            (err: Error) => this.send({t: 'res', id: msg.id, ok: false, error: {code: 'broker_error', message: err.message}}),
          )
      }
    })
    await new Promise<void>((resolve, reject) => {
      this.ws.once('open', () => resolve())
      this.ws.once('error', reject)
      this.ws.once('unexpected-response', (_req, res) => reject(new Error(`tunnel refused: ${res.statusCode}`)))
    })
    this.send({t: 'evt', event: 'hello', data: {version: '1', capabilities: hello.capabilities ?? ['agents', 'logs', 'attach'], runtimes: hello.runtimes ?? ['local'], agents: hello.agents ?? [], ...(hello.workspaces && {workspaces: hello.workspaces})}})
  }

  send(msg: TunnelMessage) {
    this.ws.send(JSON.stringify(msg))
  }

  requests(method?: string) {
    return this.received.filter((m): m is Extract<TunnelMessage, {t: 'req'}> => m.t === 'req' && (!method || m.method === method))
  }

  async close(): Promise<void> {
    if (!this.ws || this.ws.readyState === WebSocket.CLOSED) return
    const closed = new Promise((r) => this.ws.once('close', r))
    this.ws.close()
    await closed
  }
}
