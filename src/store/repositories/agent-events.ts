import {sql, type Kysely, type Selectable} from 'kysely'
import type {ApprovalDto} from '../../api/approval.js'
import type {AgentEventsTable, Database} from '../schema.js'

/** One agent change as the event log holds it. */
export interface AgentEventRecord {
  seq: number
  agentId: string
  projectId: string
  name: string
  phase: string
  activity: string | null
  detail: string
  /** What the agent was before this change (null for its first event). */
  prevPhase: string | null
  prevActivity: string | null
  /** The agent's error after and before this change (a harness's failure on a running agent). */
  error: string | null
  prevError: string | null
  /** Set on an `approval_requested` event: the approval as requested (migration 0021). */
  approval?: ApprovalDto | null
  at: string
}

export interface DeliveryRecord {
  id: string
  eventSeq: number
  channel: string
  url: string
  event: string
  agentId: string
  body: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  nextAttemptAt: string
  lastError: string | null
  createdAt: string
  updatedAt: string
}

const toEvent = (r: Selectable<AgentEventsTable>): AgentEventRecord => ({
  seq: Number(r.seq),
  agentId: r.agent_id,
  projectId: r.project_id,
  name: r.name,
  phase: r.phase,
  activity: r.activity,
  detail: r.detail,
  prevPhase: r.prev_phase,
  prevActivity: r.prev_activity,
  error: r.error ?? null,
  prevError: r.prev_error ?? null,
  approval: r.approval ? (JSON.parse(r.approval) as ApprovalDto) : null,
  at: r.at,
})

const toDelivery = (r: Selectable<Database['notification_deliveries']>): DeliveryRecord => ({
  id: r.id,
  eventSeq: Number(r.event_seq),
  channel: r.channel,
  url: r.url,
  event: r.event,
  agentId: r.agent_id,
  body: r.body,
  status: r.status as DeliveryRecord['status'],
  attempts: Number(r.attempts),
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

type Snapshot = {phase: string; activity: string | null; detail: string; error: string | null; deleted: boolean}

/**
 * Appends an event when an agent's phase, activity or detail changed (or it was deleted). Runs on
 * the connection of the write it describes, so inside a transaction the event commits with it.
 */
export async function appendAgentEvent(db: Kysely<Database>, before: Snapshot | null, after: {id: string; projectId: string; name: string} & Snapshot, at: string): Promise<void> {
  if (before && before.phase === after.phase && before.activity === after.activity && before.detail === after.detail && before.error === after.error && before.deleted === after.deleted) return
  await db
    .insertInto('agent_events')
    .values({
      agent_id: after.id,
      project_id: after.projectId,
      name: after.name,
      // A deleted agent's last event says so in its phase.
      phase: after.deleted ? 'deleted' : after.phase,
      activity: after.activity,
      detail: after.detail,
      prev_phase: before?.phase ?? null,
      prev_activity: before?.activity ?? null,
      error: after.error,
      prev_error: before?.error ?? null,
      at,
    })
    .execute()
}

export const agentEventsRepo = (db: Kysely<Database>) => ({
  /** Events after `seq`, oldest first. */
  async since(seq: number, limit = 500): Promise<AgentEventRecord[]> {
    const rows = await db.selectFrom('agent_events').selectAll().where('seq', '>', seq).orderBy('seq').limit(limit).execute()
    return rows.map(toEvent)
  },
  async latestSeq(): Promise<number> {
    const r = await db.selectFrom('agent_events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst()
    return Number(r?.m ?? 0)
  },
  /** Drops events older than `beforeIso` (resume reaches back that far). */
  async prune(beforeIso: string): Promise<void> {
    await db.deleteFrom('agent_events').where('at', '<', beforeIso).execute()
  },

  // The webhook outbox

  /** Adds a delivery unless one exists for this (event, channel): every replica may try. */
  async enqueue(d: {eventSeq: number; channel: string; url: string; event: string; agentId: string; body: string; now: string}): Promise<void> {
    await db
      .insertInto('notification_deliveries')
      .values({id: `${d.eventSeq}:${d.channel}`, event_seq: d.eventSeq, channel: d.channel, url: d.url, event: d.event, agent_id: d.agentId, body: d.body, status: 'pending', attempts: 0, next_attempt_at: d.now, claimed_until: null, last_error: null, created_at: d.now, updated_at: d.now})
      .onConflict((oc) => oc.column('id').doNothing())
      .execute()
  },
  /**
   * Claims due deliveries until `until`: one conditional update per row, so of replicas racing
   * for a row exactly one wins it. Returns the rows this caller won.
   */
  async claimDue(now: string, until: string, limit = 20): Promise<DeliveryRecord[]> {
    const due = await db
      .selectFrom('notification_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute()
    const won: DeliveryRecord[] = []
    for (const {id} of due) {
      const r = await db
        .updateTable('notification_deliveries')
        .set({claimed_until: until, attempts: sql`attempts + 1`, updated_at: now})
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
        .returningAll()
        .executeTakeFirst()
      if (r) won.push(toDelivery(r))
    }
    return won
  },
  async finish(id: string, outcome: {status: 'delivered' | 'failed' | 'pending'; error?: string | null; nextAttemptAt?: string}, now: string): Promise<void> {
    await db
      .updateTable('notification_deliveries')
      .set({status: outcome.status, claimed_until: null, updated_at: now, ...(outcome.error !== undefined && {last_error: outcome.error}), ...(outcome.nextAttemptAt && {next_attempt_at: outcome.nextAttemptAt})})
      .where('id', '=', id)
      .execute()
  },
  async deliveryCounts(): Promise<Record<string, number>> {
    const rows = await db.selectFrom('notification_deliveries').select(['status', (eb) => eb.fn.countAll().as('n')]).groupBy('status').execute()
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))
  },
  /** Most recent failed deliveries and pending ones that have failed at least once. */
  async recentProblems(limit = 20): Promise<DeliveryRecord[]> {
    const rows = await db
      .selectFrom('notification_deliveries')
      .selectAll()
      .where((eb) => eb.or([eb('status', '=', 'failed'), eb.and([eb('status', '=', 'pending'), eb('last_error', 'is not', null)])]))
      .orderBy('updated_at', 'desc')
      .limit(limit)
      .execute()
    return rows.map(toDelivery)
  },
  async deliveries(): Promise<DeliveryRecord[]> {
    return (await db.selectFrom('notification_deliveries').selectAll().orderBy('created_at').execute()).map(toDelivery)
  },
  /** Drops finished deliveries older than `beforeIso`. */
  async pruneDeliveries(beforeIso: string): Promise<void> {
    await db.deleteFrom('notification_deliveries').where('status', '!=', 'pending').where('updated_at', '<', beforeIso).execute()
  },
})

export type AgentEventsRepo = ReturnType<typeof agentEventsRepo>
