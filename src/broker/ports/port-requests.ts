/**
 * The broker's side of an agent's ports: `agent.ports` (the ports it listens on) and the
 * `agent.port` byte stream (a connection to one of them, for a preview through the Hub). The
 * agent is looked up in the broker's own registry; what is reached is decided by
 * agent-sockets.ts and ingress.ts from the kernel's tables, never from the request beyond the
 * agent's ID and a port number.
 */
import {existsSync} from 'node:fs'
import type {Duplex} from 'node:stream'
import type {Runtime, RuntimeHandle} from '../runtime.js'
import {agentSockets, listenedPorts, type AgentSockets} from './agent-sockets.js'
import {PortIngress} from './ingress.js'

export type AgentLookup = (agentId: unknown) => {agentId: string; runtime: Runtime; handle: RuntimeHandle}

const refusal = (code: string, message: string) => Object.assign(new Error(message), {code})

/** How long a reading of an agent's sockets serves connections to a port it showed. */
const FRESH_MS = 2000
const processAlive = (pid: number) => existsSync(`/proc/${pid}`)

/** How often forwarders of agents that stopped (or started anew) are looked for. */
const SWEEP_MS = 30_000

export class AgentPorts {
  private readonly ingress = new PortIngress()
  private readonly sweeper: NodeJS.Timeout
  private readonly cache = new Map<string, {at: number; pid: number; sockets: AgentSockets}>()

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
    if (method !== 'agent.port') throw refusal('unsupported_method', `this broker does not support ${method}`)
    const port = params.port
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) throw refusal('validation_error', 'port must be an integer from 1 to 65535')
    const {agentId} = this.lookup(params.agentId)
    const socket = await this.ingress.connect(agentId, await this.sockets(agentId, port), port)
    socket.on('error', (err) => duplex.destroy(err))
    duplex.on('close', () => socket.destroy())
    socket.pipe(duplex)
    duplex.pipe(socket)
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
    if (wanted !== undefined && cached && Date.now() - cached.at < FRESH_MS && cached.sockets.listeners.some((l) => l.port === wanted) && processAlive(cached.pid)) return cached.sockets
    const proc = a.runtime.agentProcess ? await a.runtime.agentProcess(a.handle) : null
    if (!proc) throw refusal('ports_unavailable', `the ports of agent ${a.agentId} cannot be read on its runtime (${a.handle.runtime}) from this broker`)
    const sockets = agentSockets(proc.pid, proc.excludePorts)
    this.cache.set(a.agentId, {at: Date.now(), pid: proc.pid, sockets})
    return sockets
  }

  /** Forwarders of agents this broker no longer runs, or whose network is a new one, go. */
  private async sweep(): Promise<void> {
    for (const [agentId, c] of this.cache) if (Date.now() - c.at > FRESH_MS) this.cache.delete(agentId)
    for (const agentId of this.ingress.agents()) {
      const current = await this.sockets(agentId).catch(() => null)
      this.ingress.keepOnly(agentId, current?.netns ?? null)
    }
  }
}
