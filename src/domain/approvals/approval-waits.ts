import type {Deps} from '../deps.js'

/** The store event channel that tells replicas an approval changed state. */
export const APPROVALS_CHANNEL = 'svc_approvals'
/**
 * A waiter reads again at least this often: a notification can be lost (PostgreSQL's LISTEN is
 * set up asynchronously, a connection can drop), and a lost one must only delay a decision.
 */
const BACKSTOP_MS = 2000

/**
 * Wakes the long-polls of `GET /approvals/:id?wait=` when an approval changes state, on every
 * replica (store events: LISTEN/NOTIFY on PostgreSQL, in-process on SQLite). One subscription
 * per Hub; waiters by approval ID.
 */
export function createApprovalWaits(deps: Deps) {
  const waiters = new Map<string, Set<() => void>>()
  let unsubscribe: (() => void) | null = null

  const fire = (id: string) => {
    for (const fn of waiters.get(id) ?? []) fn()
  }
  const ensure = () => {
    unsubscribe ??= deps.store.events.subscribe(APPROVALS_CHANNEL, (payload) => {
      const ids = (payload as {ids?: unknown}).ids
      if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') fire(id)
    })
  }

  return {
    /** A wake-up for `id` armed now: `wait(ms)` resolves on a change, after `ms`, or at the backstop. */
    next(id: string): {wait(ms: number): Promise<void>; cancel(): void} {
      ensure()
      let woke = false
      let resolve: (() => void) | null = null
      let timer: NodeJS.Timeout | null = null
      const fn = () => {
        woke = true
        resolve?.()
      }
      let set = waiters.get(id)
      if (!set) waiters.set(id, (set = new Set()))
      set.add(fn)
      const cancel = () => {
        if (timer) clearTimeout(timer)
        set!.delete(fn)
        if (set!.size === 0 && waiters.get(id) === set) waiters.delete(id)
        resolve?.()
      }
      return {
        wait: (ms) =>
          woke
            ? Promise.resolve()
            : new Promise<void>((r) => {
                resolve = r
                timer = setTimeout(r, Math.max(0, Math.min(ms, BACKSTOP_MS)))
              }),
        cancel,
      }
    },
    /** Tells every replica's waiters these approvals changed (this replica's at once). */
    wake(ids: string[]): void {
      for (const id of ids) fire(id)
      void deps.store.events.publish(APPROVALS_CHANNEL, {ids}).catch((err) => deps.logger.warn({err}, 'approval wake-up not published'))
    },
    close(): void {
      unsubscribe?.()
      unsubscribe = null
      for (const set of waiters.values()) for (const fn of set) fn()
      waiters.clear()
    },
  }
}
