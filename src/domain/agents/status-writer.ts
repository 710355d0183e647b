import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'

export interface StatusPatch {
  phase?: string
  activity?: string | null
  detail?: string
  heartbeatAt: string
}

/**
 * Coalesces agents' status reports. A report lands in memory at once (later fields win) and is
 * written with others in one transaction every `intervalMs`, so a burst of reports costs one
 * write per agent per interval instead of one per report. Reads overlay the pending patch, so a
 * caller on this Hub sees its own report immediately; other replicas see it after the flush.
 */
export function createStatusWriter(deps: Deps, intervalMs = 200) {
  const pending = new Map<string, StatusPatch>()
  // The batch being written: still overlaid on reads until its transaction commits, or a read
  // in between would see neither the report nor the row it becomes.
  let inflight = new Map<string, StatusPatch>()
  let flushing: Promise<void> | null = null

  async function flush(): Promise<void> {
    if (flushing) return flushing
    if (pending.size === 0) return
    const batch = [...pending.entries()]
    inflight = new Map(batch)
    pending.clear()
    flushing = (async () => {
      try {
        const now = iso(deps.clock.now())
        await deps.store.transaction(async (tx) => {
          for (const [agentId, p] of batch) {
            await tx.agents.update(agentId, {phase: p.phase, activity: p.activity, detail: p.detail, lastHeartbeatAt: p.heartbeatAt}, now)
          }
        })
      } catch (err) {
        // Keep the reports for the next round rather than lose them; newer ones win.
        for (const [agentId, p] of batch) pending.set(agentId, {...p, ...pending.get(agentId)})
        deps.logger.warn({err, agents: batch.length}, 'status flush failed; will retry')
      } finally {
        inflight = new Map()
        flushing = null
      }
    })()
    return flushing
  }

  const timer = setInterval(() => void flush(), intervalMs)
  timer.unref()

  return {
    report(agentId: string, patch: Omit<StatusPatch, 'heartbeatAt'> & {heartbeatAt?: string}) {
      const prev = pending.get(agentId)
      const next: StatusPatch = {...prev, heartbeatAt: patch.heartbeatAt ?? iso(deps.clock.now())}
      if (patch.phase !== undefined) next.phase = patch.phase
      if (patch.activity !== undefined) next.activity = patch.activity
      if (patch.detail !== undefined) next.detail = patch.detail
      pending.set(agentId, next)
    },
    pendingFor(agentId: string): StatusPatch | undefined {
      const writing = inflight.get(agentId)
      const next = pending.get(agentId)
      return writing && next ? {...writing, ...next} : (next ?? writing)
    },
    /** Drops what is pending for an agent (it was stopped or deleted meanwhile). */
    forget(agentId: string) {
      pending.delete(agentId)
      inflight.delete(agentId)
    },
    flush,
    async close() {
      clearInterval(timer)
      await flushing
      await flush()
    },
  }
}

export type StatusWriter = ReturnType<typeof createStatusWriter>
