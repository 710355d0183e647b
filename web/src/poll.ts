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
