import type {Logger} from 'pino'
import type {Clock} from '../../domain/shared/clock.js'
import {iso} from '../../domain/shared/clock.js'
import type {BrokerHolder, ReplicasRepo} from '../../store/repositories/replicas.js'

export interface DirectoryTimings {
  /** How often this replica renews its heartbeat. */
  heartbeatMs: number
  /** A replica not seen for this long is ignored: its brokers are not reached through it. */
  freshMs: number
  /** How often the view of who holds which broker is read again. */
  refreshMs: number
}

const DEFAULT_TIMINGS: DirectoryTimings = {heartbeatMs: 5_000, freshMs: 15_000, refreshMs: 2_000}
/** A replica row this old is a replica that is gone. */
const PRUNE_AFTER_MS = 10 * 60_000

/**
 * This replica's view of the deployment: which replica holds each broker (the broker leases of
 * broker-liveness.ts, whose holder id is this replica's id) and the URL each replica is reached
 * at (table replicas), cached here so the gateway answers synchronously; read again every
 * refreshMs. Inert until `start`: a Hub that never listens, or on SQLite, reaches its own
 * brokers only.
 */
export class ReplicaDirectory {
  /** This replica's id: its broker lease holder id (set by `start`). */
  id = ''
  private view = new Map<string, BrokerHolder>()
  private timers: NodeJS.Timeout[] = []
  private reading: Promise<void> | null = null
  private again = false
  private readonly t: DirectoryTimings

  constructor(
    private readonly replicas: ReplicasRepo,
    private readonly clock: Clock,
    private readonly logger: Logger,
    timings: Partial<DirectoryTimings> = {},
  ) {
    this.t = {...DEFAULT_TIMINGS, ...timings}
  }

  /** Publishes this replica (lease holder `id`) at `url`, reachable by the others, and follows. */
  async start(id: string, url: string): Promise<void> {
    this.id = id
    const beat = async () => {
      await this.replicas.heartbeat({id, url, now: this.now()})
      await this.replicas.prune(iso(new Date(this.clock.now().getTime() - PRUNE_AFTER_MS)))
    }
    await beat()
    await this.refresh()
    const every = (ms: number, fn: () => Promise<unknown>) => {
      const timer = setInterval(() => void fn().catch((err) => this.logger.warn({err: (err as Error).message}, 'replica directory update failed')), ms)
      timer.unref()
      this.timers.push(timer)
    }
    every(this.t.heartbeatMs, beat)
    every(this.t.refreshMs, () => this.refresh())
  }

  /** The replica holding `brokerId`, when it is another live replica; null otherwise. */
  holderOf(brokerId: string): BrokerHolder | null {
    const h = this.view.get(brokerId)
    return h && h.replicaId !== this.id ? h : null
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t)
    this.timers = []
    if (this.id) await this.replicas.remove(this.id).catch(() => {})
  }

  private now() {
    return iso(this.clock.now())
  }

  /**
   * Reads the holders again. A call during a read makes that read run once more when it ends
   * (it may have started before the change it was called for), so no change is left unread.
   */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true
      return this.reading
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false
          const t = this.clock.now().getTime()
          const rows = await this.replicas.holders(iso(new Date(t)), iso(new Date(t - this.t.freshMs)))
          this.view = new Map(rows.map((r) => [r.brokerId, r]))
        } while (this.again)
      } finally {
        this.reading = null
      }
    })()
    return this.reading
  }
}
