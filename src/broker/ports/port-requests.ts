/**
 * The broker's side of an agent's ports: `agent.ports` (the ports it listens on) and the
 * `agent.port` byte stream (a connection to one of them, for a preview through the Hub). The
 * agent is looked up in the broker's own registry; what is reached is decided by
 * agent-sockets.ts and ingress.ts from the kernel's tables, never from the request beyond the
 * agent's ID and a port number.
 */
import {existsSync, readFileSync} from 'node:fs'
import type net from 'node:net'
import type {Duplex} from 'node:stream'
import type {Runtime, RuntimeHandle} from '../runtime.js'
import {agentSockets, listenedPorts, namespaceSockets, stillListening, type AgentSockets} from './agent-sockets.js'
import {PortIngress} from './ingress.js'

export type AgentLookup = (agentId: unknown) => {agentId: string; runtime: Runtime; handle: RuntimeHandle}

const refusal = (code: string, message: string) => Object.assign(new Error(message), {code})

/** How long a reading of an agent's sockets serves connections to a port it showed. */
const FRESH_MS = 2000
const processAlive = (pid: number) => existsSync(`/proc/${pid}`)
/** A process's start time (field 22 of `/proc/<pid>/stat`), null once it is gone. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) is in parentheses and may hold spaces: count after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

/** How often forwarders of agents that stopped (or started anew) are looked for. */
const SWEEP_MS = 30_000

export class AgentPorts {
  private readonly ingress = new PortIngress()
  private readonly sweeper: NodeJS.Timeout
  /** Readings by agent: when, through which first process, and the start of the process seen in its namespace. */
  private readonly cache = new Map<string, {at: number; pid: number; sockets: AgentSockets; nsStart: string | null}>()
  private readonly roots = new Map<string, {pid: number; excludePorts: number[]; ref: string; start: string}>()

  constructor(private readonly lookup: AgentLookup) {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS)
    this.sweeper.unref()
  }

  /** `{ports}`: the ports the agent listens on now, ascending. */
  async list(params: Record<string, unknown>): Promise<{ports: number[]}> {
    return {ports: listenedPorts(await this.sockets(params.agentId))}
  }

  /** Connects `duplex` to the agent's `params.port`; refused (`not_found`) when it does not listen there. */
  async open(method: string, params: Record<string, unknown>, duplex: Duplex): Promise<void> {
    const socket = await this.connect(method, params)
    socket.on('error', (err) => duplex.destroy(err))
    duplex.on('close', () => socket.destroy())
    socket.pipe(duplex)
    duplex.pipe(socket)
  }

  /**
   * A connection to the agent's `params.port` (what `open` relays; the Hub in this process uses
   * it as it is: local-ports.ts); refused (`not_found`) when it does not listen there. Its
   * errors end it (close follows) whether or not its user listens for them.
   */
  async connect(method: string, params: Record<string, unknown>): Promise<net.Socket> {
    if (method !== 'agent.port') throw refusal('unsupported_method', `this broker does not support ${method}`)
    const port = params.port
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) throw refusal('validation_error', 'port must be an integer from 1 to 65535')
    const {agentId} = this.lookup(params.agentId)
    const socket = await this.ingress.connect(agentId, await this.sockets(agentId, port), port)
    socket.on('error', () => {})
    return socket
  }

  /** Stops every forwarder (the broker stops). */
  close(): void {
    clearInterval(this.sweeper)
    this.ingress.close()
  }

  /**
   * The agent's sockets as the kernel has them; `fresh: false` takes a reading at most
   * FRESH_MS old when it shows the port wanted (a preview's page makes a connection per
   * request: reading /proc and asking the runtime each time cost ~100 ms on a loaded host).
   * A port not in a cached reading is always looked up again.
   */
  private async sockets(agentId: unknown, wanted?: number): Promise<AgentSockets> {
    const a = this.lookup(agentId)
    const cached = this.cache.get(a.agentId)
    if (wanted !== undefined && cached && cached.sockets.listeners.some((l) => l.port === wanted) && processAlive(cached.pid)) {
      if (Date.now() - cached.at < FRESH_MS) return cached.sockets
      // On the host's network, an older reading is renewed from the host's table alone while the
      // socket seen held by the agent's processes still listens there (the walk of every
      // process in /proc it saves stalled the Hub's process for tens of ms on a loaded host).
      const still = cached.sockets.nsPid === null ? stillListening(cached.sockets.listeners) : []
      if (still.some((l) => l.port === wanted)) {
        const sockets = {...cached.sockets, listeners: still}
        this.cache.set(a.agentId, {...cached, at: Date.now(), sockets})
        return sockets
      }
    }
    const proc = await this.firstProcess(a)
    // In its own network namespace, seen through the same process as before: only that
    // namespace's table is read again (every listener there is the agent's).
    const ns = cached?.pid === proc.pid ? cached.sockets : null
    const again = ns?.nsPid != null && processStart(ns.nsPid) === cached!.nsStart ? namespaceSockets(ns.nsPid, ns.netns!, proc.excludePorts) : null
    const sockets = again ?? agentSockets(proc.pid, proc.excludePorts)
    const nsStart = again ? cached!.nsStart : sockets.nsPid === null ? null : processStart(sockets.nsPid)
    this.cache.set(a.agentId, {at: Date.now(), pid: proc.pid, sockets, nsStart})
    return sockets
  }

  /**
   * The agent's first process as its runtime names it (asking costs a tmux or podman process
   * each time: most of a preview request's time on a loaded host). It is asked again once that
   * process is gone, identified by its PID and start time so a PID reused by another process is
   * never taken for the agent's.
   */
  private async firstProcess(a: ReturnType<AgentLookup>): Promise<{pid: number; excludePorts: number[]}> {
    const known = this.roots.get(a.agentId)
    if (known && known.ref === a.handle.ref && processStart(known.pid) === known.start) return known
    this.roots.delete(a.agentId)
    const proc = a.runtime.agentProcess
      ? await a.runtime.agentProcess(a.handle).catch((err: Error) => {
          throw refusal('ports_unavailable', `the ports of agent ${a.agentId} cannot be read now: ${err.message}`)
        })
      : null
    if (!proc) throw refusal('ports_unavailable', `the ports of agent ${a.agentId} cannot be read on its runtime (${a.handle.runtime}) from this broker`)
    const start = processStart(proc.pid)
    if (start !== null) this.roots.set(a.agentId, {...proc, ref: a.handle.ref, start})
    return proc
  }

  /** Forwarders of agents this broker no longer runs, or whose network is a new one, go. */
  private async sweep(): Promise<void> {
    for (const [agentId, c] of this.cache) if (!processAlive(c.pid)) this.cache.delete(agentId)
    for (const [agentId, r] of this.roots) if (processStart(r.pid) !== r.start) this.roots.delete(agentId)
    for (const agentId of this.ingress.agents()) {
      const current = await this.sockets(agentId).catch(() => null)
      this.ingress.keepOnly(agentId, current?.netns ?? null)
    }
  }
}
