import {randomUUID} from 'node:crypto'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'
import {AGENT_EVENTS_CHANNEL} from '../../store/store.js'

/** How long a broker stays online without its holder renewing the lease (the holder's crash, or its lost database). */
export const LEASE_MS = 15_000
/** How often a replica renews its brokers' leases and looks for lapsed ones. */
export const LIVENESS_TICK_MS = 5_000

/**
 * Broker liveness across replicas (CONTRACT "Hosted at scale": a broker whose connection is gone
 * is `offline` on every replica within 30 s). Each Hub process is a lease holder with a random
 * ID. A broker's hello takes its lease on this replica; every tick renews the leases of the
 * brokers this replica holds and makes `offline` the brokers whose lease lapsed on any replica,
 * so a crashed replica's brokers go offline within LEASE_MS + LIVENESS_TICK_MS (20 s), with their
 * agents' `offline` events in the same transaction. A tunnel that closes on this replica releases
 * its lease at once. A replica that lost its database while holding brokers takes them back
 * when it reaches it again (the survivors may have made them offline meanwhile).
 */
export function createBrokerLiveness(deps: Deps, opts: {leaseMs?: number; tickMs?: number} = {}) {
  const {store, clock, logger} = deps
  const leaseMs = opts.leaseMs ?? LEASE_MS
  const tickMs = opts.tickMs ?? LIVENESS_TICK_MS
  const holder = randomUUID()
  /** Brokers whose hello this replica read on a tunnel still open. */
  const held = new Set<string>()
  /**
   * Each broker's hello and close, one after the other: a tunnel that closes right after its
   * hello must not be released before the hello's lease is taken (it would stay online).
   */
  const chains = new Map<string, Promise<unknown>>()
  const serial = <T>(brokerId: string, fn: () => Promise<T>): Promise<T> => {
    const run = (chains.get(brokerId) ?? Promise.resolve()).catch(() => {}).then(fn)
    chains.set(brokerId, run)
    void run.catch(() => {}).finally(() => chains.get(brokerId) === run && chains.delete(brokerId))
    return run
  }
  let timer: NodeJS.Timeout | null = null
  let ticking: Promise<void> | null = null
  /** Wakes every replica's event feed once agent events were committed (else its poll finds them). */
  const wake = (changed: boolean) => {
    if (changed) void store.events.publish(AGENT_EVENTS_CHANNEL, {}).catch(() => {})
    return changed
  }
  const times = () => {
    const t = clock.now().getTime()
    return {now: iso(new Date(t)), until: iso(new Date(t + leaseMs))}
  }

  async function tick(): Promise<void> {
    const {now, until} = times()
    const ids = [...held]
    await store.brokers.leases.renew(holder, ids, until, now)
    // Held here but offline (lapsed while this replica could not reach the database): back online.
    for (const id of await store.brokers.leases.notOnline(ids)) {
      if (held.has(id)) wake(await store.transaction((tx) => tx.brokers.leases.take(id, holder, until, now)))
    }
    for (const id of await store.brokers.leases.expired(now)) {
      if (held.has(id)) continue
      if (wake(await store.transaction((tx) => tx.brokers.leases.expire(id, now)))) logger.info({brokerId: id}, 'broker offline: its lease lapsed (the replica holding it is gone)')
    }
  }

  const once = (): Promise<void> => {
    ticking ??= tick().finally(() => (ticking = null))
    return ticking
  }

  return {
    holder,
    /** A broker said hello on a tunnel to this replica: it is online, held here; its capabilities recorded. */
    connected: (brokerId: string, info: {capabilities: string[]; runtimes: string[]; version: string}): Promise<void> =>
      serial(brokerId, async () => {
        held.add(brokerId)
        const {now, until} = times()
        wake(
          await store.transaction(async (tx) => {
            const back = await tx.brokers.leases.take(brokerId, holder, until, now)
            await tx.brokers.markConnected(brokerId, info, now)
            return back
          }),
        )
      }),
    /** Its tunnel to this replica closed: offline, unless another replica holds it by now. */
    disconnected: (brokerId: string): Promise<void> =>
      serial(brokerId, async () => {
        held.delete(brokerId)
        const {now} = times()
        wake(await store.transaction((tx) => tx.brokers.leases.release(brokerId, holder, now)))
      }),
    /** One renewal and sweep (also run by the timer; never two at once); a failure (the database away) waits for the next. */
    tick: once,
    start() {
      if (timer) return
      timer = setInterval(() => void once().catch((err) => logger.warn({err: (err as Error).message}, 'broker liveness tick failed')), tickMs)
      timer.unref()
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = null
      await ticking?.catch(() => {})
    },
  }
}

export type BrokerLiveness = ReturnType<typeof createBrokerLiveness>
