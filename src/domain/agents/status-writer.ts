import {performance} from 'node:perf_hooks'
import {AppError} from '../../api/app-error.js'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'

export interface StatusPatch {
  phase?: string
  activity?: string | null
  detail?: string
  /** A harness's failure (null clears it). */
  error?: string | null
  heartbeatAt: string
}

/** A pending step: the fields of the reports merged into it. */
type Step = StatusPatch

/** How long a written batch stays overlaid on reads that began before it committed. */
const COMMITTED_OVERLAY_MS = 30_000

/** Steps one agent may hold pending; past it, the oldest fold into one. */
const MAX_STEPS = 8

/** Phases in which an agent's session is held (or being made) by its broker. */
export const LIVE_PHASES: ReadonlySet<string> = new Set(['provisioning', 'cloning', 'running'])

/**
 * Coalesces agents' status reports and writes them before their answer. A report lands in memory
 * at once and resolves when the transaction holding it has committed, so a 2xx means stored: a
 * crash right after cannot lose it (CONTRACT "Isolation"). Writes are group commits: a report
 * that finds no write under way starts one on the next turn of the event loop; reports that
 * come while a write is under way go together in the next, so a burst costs one transaction per
 * round trip of the database, not one per report. Reports of the same phase and activity merge
 * (later fields win); a report that changes them starts a new step, written after the one before
 * in the same transaction, so every change is an agent event (a `waiting_for_input` answered
 * within one batch still reaches the event stream and the webhooks). Reads overlay the pending
 * steps, so a caller on this Hub sees its own report immediately; other replicas once committed.
 *
 * A report made with `liveOnly` (an agent's own credential) is written only if the agent is live
 * (LIVE_PHASES) when its batch is written: the row is read in the same transaction, once per
 * agent and batch, and the report is refused with 409 `agent_not_running` otherwise (with the
 * other reports on that agent in the batch, whose steps it shares). Until checked, such
 * reports are not overlaid on reads, so a refused one never shows. The caller's credential is
 * not checked here: the route resolved it (agent-tokens.ts: revocations reach every replica's
 * cache through the store's events).
 *
 * A read takes `readMark()` before it reads the row. A batch that commits after that mark is
 * still overlaid on that read: on PostgreSQL the read runs on another connection and may have
 * seen the row from before the commit, and by the time it returns the batch has left memory.
 */
export interface StatusWriterOptions {
  /** How often a batch that failed is tried again (and, with `eager` off, how often to write). */
  intervalMs?: number
  /** Write as soon as a report comes (default); off, only the interval and `flush()` write (tests). */
  eager?: boolean
  /**
   * How long a write waits for more reports before it starts (default 0: the next turn of the
   * event loop). Longer makes batches larger but every answer later: with callers that wait for
   * their answer (hooks), throughput follows latency, and 5 ms halved it in the status bench.
   */
  lingerMs?: number
  /**
   * The approvals an agent answered at its terminal: a report in one of `activities` (the harness
   * went on) settles those still pending (services.ts, approvals-service.ts). The batch's own
   * transaction reads whether each such agent has a pending approval (one statement, on SQLite
   * on the transaction's connection); after the commit, before that agent's reports are
   * answered, `settle` runs for those that have one. Almost no batch has one, so the status path
   * pays one indexed read per agent and batch, and no trip of its own to the database. Decided by
   * the steps written, so a batch written again after a failed round settles too. A failed
   * `settle` answers that agent's reports with its error; they stay stored. The read is part of
   * the batch's transaction: if it fails, the round fails and is tried again, as for any write.
   */
  settleApprovals?: {activities: ReadonlySet<string>; settle: (agentId: string) => Promise<void>}
}

interface Waiter {
  agentId: string
  activity: string | null | undefined
  resolve: () => void
  reject: (err: unknown) => void
}

export function createStatusWriter(deps: Deps, options: StatusWriterOptions = {}) {
  const intervalMs = options.intervalMs ?? 200
  const eager = options.eager ?? true
  const lingerMs = options.lingerMs ?? 0
  const settleApprovals = options.settleApprovals
  const pending = new Map<string, Step[]>()
  // Who waits for the reports in `pending`: answered when the batch that takes them commits.
  let waiting: Waiter[] = []
  let scheduled = false
  // Agents whose pending steps include a `liveOnly` report: checked when written, hidden till then.
  let unchecked = new Set<string>()
  let uncheckedInflight = new Set<string>()
  // The batch being written: still overlaid on reads until its transaction commits, or a read
  // in between would see neither the report nor the row it becomes.
  let inflight = new Map<string, Step[]>()
  // Written batches, per agent (later fields win), with the epoch of their commit.
  const committed = new Map<string, {patch: StatusPatch; epoch: number; at: number}>()
  let epoch = 0
  let flushing: Promise<void> | null = null

  async function flush(): Promise<void> {
    if (flushing) return flushing
    const waiters = waiting
    waiting = []
    if (pending.size === 0) {
      // forget() dropped what they reported (the agent was stopped or removed meanwhile).
      for (const w of waiters) w.resolve()
      return
    }
    const batch = [...pending.entries()]
    const check = unchecked
    inflight = new Map(batch)
    uncheckedInflight = check
    unchecked = new Set()
    pending.clear()
    flushing = (async () => {
      // Agents not live when their batch was written: what the refusal says.
      const refused = new Map<string, {name: string; phase: string}>()
      // Agents whose written steps settle approvals (a retried batch's too, whose callers were
      // already answered), and of those, the ones that had one pending.
      const settling = settleApprovals ? agentsReporting(batch, settleApprovals.activities) : null
      const toSettle: string[] = []
      try {
        const now = iso(deps.clock.now())
        // The store's status transaction: only these statements (store/status-transaction.ts).
        await deps.store.statusTransaction(async (tx) => {
          for (const [agentId, all] of batch) {
            // The liveness check reads the row in the transaction that writes: a stop written
            // before it is seen (SQLite serialises writers; PostgreSQL reads what committed
            // before this statement).
            const {refused: no} = await tx.agents.writeStatus(agentId, all, now, check.has(agentId) ? LIVE_PHASES : null)
            if (no) refused.set(agentId, no)
            else if (settling?.has(agentId) && (await tx.agents.hasPendingApproval(agentId))) toSettle.push(agentId)
          }
        })
        epoch += 1
        const at = performance.now()
        // Only what is still in flight: forget() during the write removed an agent on purpose.
        for (const [agentId, steps] of batch) {
          if (inflight.get(agentId) !== steps || refused.has(agentId)) continue
          committed.set(agentId, {patch: merged([committed.get(agentId)?.patch, ...steps])!, epoch, at})
        }
        const failed = toSettle.length ? await settleAll(settleApprovals!.settle, toSettle) : null
        for (const w of waiters) {
          const no = refused.get(w.agentId)
          const err = failed?.get(w.agentId)
          if (err !== undefined) w.reject(err)
          else if (no) w.reject(new AppError('agent_not_running', `agent ${no.name} is not running (phase ${no.phase}): its session is not one the Hub holds, so its reports are refused; start it again`, {phase: no.phase}))
          else w.resolve()
        }
      } catch (err) {
        // Keep the reports for the next round rather than lose them, before the newer ones; not
        // those of an agent forget() dropped meanwhile (stopped or deleted on purpose), and no
        // more steps than one agent may hold (a long outage would otherwise pile them up).
        for (const [agentId, steps] of batch) {
          if (inflight.get(agentId) !== steps) continue
          pending.set(agentId, compact([...steps, ...(pending.get(agentId) ?? [])]))
          // Still to be checked when written: a retry must not write it unchecked.
          if (check.has(agentId)) unchecked.add(agentId)
        }
        deps.logger.warn({err, agents: batch.length}, 'status flush failed; will retry')
        // Their callers answer an error (the hook keeps the report and sends it again).
        for (const w of waiters) w.reject(err)
      } finally {
        inflight = new Map()
        uncheckedInflight = new Set()
        flushing = null
        // Reports that came during this write are the next batch.
        if (eager && waiting.length) schedule()
      }
    })()
    return flushing
  }

  function schedule(): void {
    if (scheduled || flushing) return
    scheduled = true
    const run = () => {
      scheduled = false
      void flush()
    }
    if (lingerMs > 0) setTimeout(run, lingerMs)
    else setImmediate(run)
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
    /**
     * Queues a report; resolves once the transaction holding it has committed (or once forget()
     * dropped it), rejects when that write failed (the report is still kept for the next round),
     * and with `liveOnly` with 409 `agent_not_running` when the agent was not live then. A
     * caller that does not wait (a broker's liveness) may ignore the promise.
     */
    report(agentId: string, patch: Omit<StatusPatch, 'heartbeatAt'> & {heartbeatAt?: string}, opts: {liveOnly?: boolean} = {}): Promise<void> {
      // iso() formats only the milliseconds within a second it already formatted (clock.ts).
      const step = stepOf(patch, patch.heartbeatAt ?? iso(deps.clock.now()))
      // Pending lists are always compacted and only `pending` holds them (a flush takes them out).
      const steps = pending.get(agentId)
      if (steps === undefined) pending.set(agentId, [step])
      else appendStep(steps, step)
      if (opts.liveOnly) unchecked.add(agentId)
      const stored = new Promise<void>((resolve, reject) => waiting.push({agentId, activity: patch.activity, resolve, reject}))
      // Handled here so that an ignored promise of a failed write is no unhandled rejection.
      stored.catch(() => {})
      if (eager) schedule()
      return stored
    },
    /** Taken before reading agent rows; pass it to `pendingFor` with each row read. */
    readMark(): number {
      return epoch
    },
    /**
     * What to overlay on a row read after `mark` was taken: batches written since the mark,
     * then the batch being written, then what is pending (later wins); not what still waits for
     * its liveness check. Without a mark, only what has not been written yet.
     */
    pendingFor(agentId: string, mark = epoch): StatusPatch | undefined {
      const written = committed.get(agentId)
      const writing = uncheckedInflight.has(agentId) ? [] : (inflight.get(agentId) ?? [])
      const queued = unchecked.has(agentId) ? [] : (pending.get(agentId) ?? [])
      return merged([written && written.epoch > mark ? written.patch : undefined, ...writing, ...queued])
    },
    /**
     * Drops what is pending for an agent (it was stopped or deleted meanwhile). Resolves once a
     * batch already being written has settled: a caller that then writes the agent's row writes
     * after it, so an older report in that batch cannot land on top.
     */
    forget(agentId: string): Promise<void> {
      pending.delete(agentId)
      unchecked.delete(agentId)
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

/** The agents of a batch with a step in one of `activities`. */
function agentsReporting(batch: ReadonlyArray<readonly [string, readonly Step[]]>, activities: ReadonlySet<string>): Set<string> {
  const out = new Set<string>()
  for (const [agentId, steps] of batch) if (steps.some((s) => s.activity != null && activities.has(s.activity))) out.add(agentId)
  return out
}

/** `settle` for each agent, one after the other: what failed, per agent. */
async function settleAll(settle: (agentId: string) => Promise<void>, agentIds: readonly string[]): Promise<Map<string, unknown>> {
  const failed = new Map<string, unknown>()
  for (const agentId of agentIds) {
    try {
      await settle(agentId)
    } catch (err) {
      failed.set(agentId, err ?? new Error('settling approvals failed'))
    }
  }
  return failed
}

/** A report's step: its heartbeat and the fields it sets (an undefined field leaves the stored one as it is). */
function stepOf(patch: Partial<StatusPatch>, heartbeatAt: string): Step {
  const out: Step = {heartbeatAt}
  if (patch.phase !== undefined) out.phase = patch.phase
  if (patch.activity !== undefined) out.activity = patch.activity
  if (patch.detail !== undefined) out.detail = patch.detail
  if (patch.error !== undefined) out.error = patch.error
  return out
}

/** Layers merged in order (later fields win); undefined when there is none. */
function merged(layers: Array<Step | undefined>): Step | undefined {
  const present = layers.filter((l): l is Step => l !== undefined)
  if (present.length <= 1) return present[0]
  return Object.assign({}, ...present) as Step
}

/** Whether `step` keeps the state of `last`: either a bare heartbeat, or the same phase and activity. */
const sameState = (last: Step, step: Step) =>
  (last.phase === undefined && last.activity === undefined) || ((step.phase === undefined || step.phase === last.phase) && (step.activity === undefined || step.activity === last.activity))

/**
 * Steps merged where a step keeps the state of the one before (later fields win), then at most
 * MAX_STEPS: the oldest fold into one (their latest fields), so the newest changes keep their own events.
 */
function compact(steps: Step[]): Step[] {
  const out: Step[] = []
  for (const step of steps) {
    const last = out.at(-1)
    if (last && sameState(last, step)) out[out.length - 1] = {...last, ...step}
    else out.push(step)
  }
  if (out.length <= MAX_STEPS) return out
  const folded = out.length - MAX_STEPS + 1
  return [merged(out.slice(0, folded))!, ...out.slice(folded)]
}

/** `compact` of a compacted list and one more step, in place (a report's path: no copy of the list). */
function appendStep(steps: Step[], step: Step): void {
  const last = steps[steps.length - 1]
  // A new object, not `last` changed: a read may still hold the one it was given (pendingFor).
  if (sameState(last, step)) steps[steps.length - 1] = {...last, ...step}
  else if (steps.push(step) > MAX_STEPS) steps.splice(0, 2, {...steps[0], ...steps[1]})
}
