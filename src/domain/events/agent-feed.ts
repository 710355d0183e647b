import type {AgentEventDto} from '../../api/agent-event.js'
import {AGENT_EVENTS_CHANNEL} from '../../store/store.js'
import type {AgentEventRecord} from '../../store/repositories/agent-events.js'
import type {Deps} from '../deps.js'
import {TERMINAL_ACTIVITIES} from '../agents/agent-state.js'
import {iso} from '../shared/clock.js'


/** The wire shape of a logged event; activity is shown as agent views show it. */
export function agentEventOf(e: AgentEventRecord): AgentEventDto {
  const activity = e.phase === 'running' || (e.activity !== null && (TERMINAL_ACTIVITIES as readonly string[]).includes(e.activity)) ? e.activity : null
  return {id: e.agentId, projectId: e.projectId, name: e.name, phase: e.phase, activity, detail: e.detail, at: e.at}
}

/**
 * An `approval_requested` event (SSE data, and the webhook payload's core): the agent as it
 * waits, and the approval as requested (CONTRACT "Approvals").
 */
export function approvalRequestedOf(e: AgentEventRecord, hub: {name: string; url: string} | null) {
  const agent = agentEventOf(e)
  return {event: 'approval_requested', agent: {...agent, error: e.error}, hub, at: e.at, approval: e.approval}
}

export interface FeedOptions {
  /** Backstop poll when no notification arrives (default 1 s). */
  pollMs?: number
  /** How long a hole in the sequence is waited for before it is skipped (default 2 s). */
  gapMs?: number
  /** How long events are kept for `Last-Event-ID` resume (default 24 h). */
  retainMs?: number
}

/**
 * One replica's view of the agent event log (`agent_events`). Every replica reads the rows
 * committed since its cursor when the store says some were written (LISTEN/NOTIFY on PostgreSQL,
 * in-process on SQLite) and at a backstop poll, and hands each event once to its listeners.
 *
 * On PostgreSQL sequence values are taken at insert and become visible at commit, so a later
 * seq can be read before an earlier one: the cursor stops before a hole and reads it again
 * until it fills or `gapMs` passes (a rolled-back insert leaves a hole for ever).
 */
export function createAgentFeed(deps: Deps, opts: FeedOptions = {}) {
  const {store, logger} = deps
  const pollMs = opts.pollMs ?? 1000
  const gapMs = opts.gapMs ?? 2000
  const retainMs = opts.retainMs ?? 24 * 3600_000
  const listeners = new Set<(e: AgentEventRecord) => void>()
  let cursor = 0
  // Seqs above the cursor already handed out, and when the oldest hole below them was seen.
  const ahead = new Set<number>()
  let holeSince: number | null = null
  let reading: Promise<void> | null = null
  let again = false
  let started = false
  let timer: NodeJS.Timeout | null = null
  let unsubscribe: (() => void) | null = null
  let pruned = 0

  async function readOnce(): Promise<void> {
    const rows = await store.agentEvents.since(cursor, 1000)
    for (const r of rows) {
      if (ahead.has(r.seq)) continue
      ahead.add(r.seq)
      for (const fn of listeners) {
        try {
          fn(r)
        } catch (err) {
          logger.warn({err}, 'agent event listener failed')
        }
      }
    }
    while (ahead.has(cursor + 1)) ahead.delete(++cursor)
    if (ahead.size === 0) holeSince = null
    else {
      const nowMs = Date.now()
      holeSince ??= nowMs
      if (nowMs - holeSince >= gapMs) {
        // Give up on the hole: skip to the lowest seq seen past it.
        cursor = Math.min(...ahead) - 1
        while (ahead.has(cursor + 1)) ahead.delete(++cursor)
        holeSince = ahead.size ? nowMs : null
      }
    }
    if (rows.length === 1000) again = true
  }

  /** Reads new events; concurrent calls coalesce into one more read. */
  function read(): Promise<void> {
    if (reading) {
      again = true
      return reading
    }
    reading = (async () => {
      try {
        do {
          again = false
          await readOnce()
        } while (again)
      } catch (err) {
        logger.warn({err}, 'reading agent events failed; will retry')
      } finally {
        reading = null
      }
    })()
    return reading
  }

  async function prune() {
    const now = deps.clock.now().getTime()
    if (now - pruned < 3600_000) return
    pruned = now
    await store.agentEvents.prune(iso(new Date(now - retainMs))).catch((err) => logger.warn({err}, 'pruning agent events failed'))
  }

  return {
    /** Starts at the current end of the log: events from now on. */
    async start(): Promise<void> {
      if (started) return
      started = true
      cursor = await store.agentEvents.latestSeq()
      unsubscribe = store.events.subscribe(AGENT_EVENTS_CHANNEL, () => void read())
      timer = setInterval(() => {
        void read()
        void prune()
      }, pollMs)
      timer.unref()
    },
    /** Calls `fn` with every event this replica reads from now on; returns an unsubscribe. */
    subscribe(fn: (e: AgentEventRecord) => void): () => void {
      listeners.add(fn)
      return () => listeners.delete(fn)
    },
    /** The seq up to which every event was handed out (resume replays from the log up to it). */
    position: () => cursor,
    /** Reads now (tests, and callers that just wrote). */
    poke: read,
    async close(): Promise<void> {
      unsubscribe?.()
      if (timer) clearInterval(timer)
      listeners.clear()
      await reading
    },
  }
}

export type AgentFeed = ReturnType<typeof createAgentFeed>
