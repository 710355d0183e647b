import {markReady} from './readiness.js'

/**
 * Runs `fn` now and again `ms` after each run ends, until the returned stop is called. Lists
 * of agents use it to follow phase and activity live.
 */
export function poll(fn: () => Promise<void>, ms: number): () => void {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const tick = async () => {
    try {
      await fn()
    } finally {
      if (!stopped) timer = setTimeout(tick, ms)
    }
  }
  void tick()
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}

/**
 * `poll` for a view: a failed refresh is shown as the view's `failure` (and cleared by the next
 * good one), and the first good refresh writes the view's readiness mark once it is on screen.
 */
export function pollView(host: {updateComplete: Promise<unknown>; failure: string}, view: string, fn: () => Promise<void>, ms: number): () => void {
  let first = true
  return poll(async () => {
    try {
      await fn()
      host.failure = ''
      if (first) {
        first = false
        await host.updateComplete
        void markReady(view)
      }
    } catch (err) {
      host.failure = (err as Error).message
    }
  }, ms)
}
