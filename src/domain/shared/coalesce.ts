/**
 * Calls of `fn` with the same key, coalesced: at most one runs at a time per key, and every call
 * made while one runs shares the next run, which starts once that one has settled. So a call's
 * run always starts after the call was made (it sees whatever the caller wrote before calling),
 * and a burst of N calls costs at most two runs, not N. A failed run rejects only its callers.
 */
export function coalescePerKey<K>(fn: (key: K) => Promise<void>): (key: K) => Promise<void> {
  interface Entry {
    run: Promise<void>
    next: Promise<void> | null
  }
  const running = new Map<K, Entry>()

  function start(key: K): Promise<void> {
    const entry: Entry = {run: fn(key), next: null}
    running.set(key, entry)
    const settled = () => {
      // The shared next run, when there is one, replaces this entry as it starts.
      if (running.get(key) === entry && entry.next === null) running.delete(key)
    }
    entry.run.then(settled, settled)
    return entry.run
  }

  return (key: K) => {
    const current = running.get(key)
    if (!current) return start(key)
    current.next ??= new Promise<void>((resolve, reject) => {
      const go = () => {
        start(key).then(resolve, reject)
      }
      current.run.then(go, go)
    })
    return current.next
  }
}
