import {performance} from 'node:perf_hooks'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'

export interface StatusPatch {
  phase?: string
  activity?: string | null
  detail?: string
  heartbeatAt: string
}

/** How long a written batch stays overlaid on reads that began before it committed. */
const COMMITTED_OVERLAY_MS = 30_000

/** Steps one agent may hold pending; past it, the oldest fold into one. */
const MAX_STEPS = 8

/**
 * Coalesces agents' status reports. A report lands in memory at once and is written with others
 * in one transaction every `intervalMs`, so a burst of reports costs one write per agent per
 * interval instead of one per report. Reports of the same phase and activity merge (later fields
 * win); a report that changes them starts a new step, written after the one before in the same
 * transaction, so every change is an agent event (a `waiting_for_input` answered within the
 * interval still reaches the event stream and the webhooks). Reads overlay the pending steps, so
 * a caller on this Hub sees its own report immediately; other replicas see it after the flush.
 *
 * A read takes `readMark()` before it reads the row. A batch that commits after that mark is
 * still overlaid on that read: on PostgreSQL the read runs on another connection and may have
 * seen the row from before the commit, and by the time it returns the batch has left memory.
 */
export function createStatusWriter(deps: Deps, intervalMs = 200) {
  const pending = new Map<string, StatusPatch[]>()
  // The batch being written: still overlaid on reads until its transaction commits, or a read
  // in between would see neither the report nor the row it becomes.
  let inflight = new Map<string, StatusPatch[]>()
  // Written batches, per agent (later fields win), with the epoch of their commit.
  const committed = new Map<string, {patch: StatusPatch; epoch: number; at: number}>()
  let epoch = 0
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
          for (const [agentId, steps] of batch) {
            for (const p of steps) await tx.agents.update(agentId, {phase: p.phase, activity: p.activity, detail: p.detail, lastHeartbeatAt: p.heartbeatAt}, now)
          }
        })
        epoch += 1
        const at = performance.now()
        // Only what is still in flight: forget() during the write removed an agent on purpose.
        for (const [agentId, steps] of batch) {
          if (inflight.get(agentId) !== steps) continue
          committed.set(agentId, {patch: merged([committed.get(agentId)?.patch, ...steps])!, epoch, at})
        }
      } catch (err) {
        // Keep the reports for the next round rather than lose them, before the newer ones; not
        // those of an agent forget() dropped meanwhile (stopped or deleted on purpose), and no
        // more steps than one agent may hold (a long outage would otherwise pile them up).
        for (const [agentId, steps] of batch) {
          if (inflight.get(agentId) !== steps) continue
          pending.set(agentId, compact([...steps, ...(pending.get(agentId) ?? [])]))
        }
        deps.logger.warn({err, agents: batch.length}, 'status flush failed; will retry')
      } finally {
        inflight = new Map()
        flushing = null
      }
    })()
    return flushing
  }

  /** Drops written batches no read could still be missing. */
  function prune() {
    const horizon = performance.now() - COMMITTED_OVERLAY_MS
    for (const [agentId, c] of committed) if (c.at < horizon) committed.delete(agentId)
  }

  const timer = setInterval(() => {
    prune()
    void flush()
  }, intervalMs)
  timer.unref()

  return {
    report(agentId: string, patch: Omit<StatusPatch, 'heartbeatAt'> & {heartbeatAt?: string}) {
      const step = {heartbeatAt: patch.heartbeatAt ?? iso(deps.clock.now()), ...defined(patch)}
      pending.set(agentId, compact([...(pending.get(agentId) ?? []), step]))
    },
    /** Taken before reading agent rows; pass it to `pendingFor` with each row read. */
    readMark(): number {
      return epoch
    },
    /**
     * What to overlay on a row read after `mark` was taken: batches written since the mark,
     * then the batch being written, then what is pending (later wins). Without a mark, only
     * what has not been written yet.
     */
    pendingFor(agentId: string, mark = epoch): StatusPatch | undefined {
      const written = committed.get(agentId)
      return merged([written && written.epoch > mark ? written.patch : undefined, ...(inflight.get(agentId) ?? []), ...(pending.get(agentId) ?? [])])
    },
    /**
     * Drops what is pending for an agent (it was stopped or deleted meanwhile). Resolves once a
     * batch already being written has settled: a caller that then writes the agent's row writes
     * after it, so an older report in that batch cannot land on top.
     */
    forget(agentId: string): Promise<void> {
      pending.delete(agentId)
      inflight.delete(agentId)
      committed.delete(agentId)
      return flushing ?? Promise.resolve()
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

/** The fields a report sets (an undefined field leaves the stored one as it is). */
function defined(patch: Partial<StatusPatch>): Partial<StatusPatch> {
  const out: Partial<StatusPatch> = {}
  if (patch.phase !== undefined) out.phase = patch.phase
  if (patch.activity !== undefined) out.activity = patch.activity
  if (patch.detail !== undefined) out.detail = patch.detail
  return out
}

/** Layers merged in order (later fields win); undefined when there is none. */
function merged(layers: Array<StatusPatch | undefined>): StatusPatch | undefined {
  const present = layers.filter((l): l is StatusPatch => l !== undefined)
  if (present.length <= 1) return present[0]
  return Object.assign({}, ...present) as StatusPatch
}

/**
 * Steps merged where a step keeps the state of the one before (same phase and activity, or
 * either of them a bare heartbeat: later fields win), then at most MAX_STEPS: the oldest fold
 * into one (their latest fields), so the newest changes keep their own events.
 */
function compact(steps: StatusPatch[]): StatusPatch[] {
  const out: StatusPatch[] = []
  const bare = (s: StatusPatch) => s.phase === undefined && s.activity === undefined
  for (const step of steps) {
    const last = out.at(-1)
    const same = last && (bare(last) || ((step.phase === undefined || step.phase === last.phase) && (step.activity === undefined || step.activity === last.activity)))
    if (same) out[out.length - 1] = {...last, ...step}
    else out.push(step)
  }
  if (out.length <= MAX_STEPS) return out
  const folded = out.length - MAX_STEPS + 1
  return [merged(out.slice(0, folded))!, ...out.slice(folded)]
}
