import {AppError} from '../../api/app-error.js'
import type {CallContext} from '../authz/context.js'
import type {TunnelStream} from '../brokers/gateway.js'

/** Takes a slot for one live stream of an agent, or throws 429 quota_exceeded; returns its release. */
export type StreamGate = (ctx: CallContext, agentId: string) => () => void

/**
 * Caps on open live streams of one kind (attach, or live logs) on this Hub process: per caller
 * (a user, agent or broker) and per agent. Each attach socket is a terminal client on the
 * broker's host, so without a cap one caller could spawn any number of them.
 */
export class StreamSlots {
  private readonly byCaller = new Map<string, number>()
  private readonly byAgent = new Map<string, number>()

  constructor(
    private readonly kind: string,
    private readonly perCaller: number,
    private readonly perAgent: number,
  ) {}

  readonly gate: StreamGate = (ctx, agentId) => {
    const caller = `${ctx.principal.kind}:${ctx.principal.id}`
    const mine = this.byCaller.get(caller) ?? 0
    const theirs = this.byAgent.get(agentId) ?? 0
    if (mine >= this.perCaller) throw new AppError('quota_exceeded', `too many open ${this.kind} sockets: at most ${this.perCaller} per caller; close one first`, {limit: this.perCaller, scope: 'caller', kind: this.kind})
    if (theirs >= this.perAgent) throw new AppError('quota_exceeded', `too many open ${this.kind} sockets to this agent: at most ${this.perAgent}; close one first`, {limit: this.perAgent, scope: 'agent', kind: this.kind})
    this.byCaller.set(caller, mine + 1)
    this.byAgent.set(agentId, theirs + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      this.dec(this.byCaller, caller)
      this.dec(this.byAgent, agentId)
    }
  }

  private dec(map: Map<string, number>, key: string) {
    const n = (map.get(key) ?? 1) - 1
    if (n <= 0) map.delete(key)
    else map.set(key, n)
  }
}

/** The stream, releasing its slot once when it ends from either side. */
export function releasingOnClose(stream: TunnelStream, release: () => void): TunnelStream {
  stream.onClose(() => release())
  return {
    onData: (l) => stream.onData(l),
    onClose: (l) => stream.onClose(l),
    write: (d) => stream.write(d),
    resize: (c, r) => stream.resize(c, r),
    close: () => {
      release()
      stream.close()
    },
  }
}
