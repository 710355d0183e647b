import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'
import {kyselyExec, type Exec} from '../compiled-statement.js'

export interface MessageRecord {
  id: string
  projectId: string
  agentId: string
  broadcastId: string | null
  sender: {kind: string; id: string}
  ingress: string
  body: Record<string, unknown>
  /** `queued`: kept while the agent's broker is away, delivered when it returns. */
  delivery: 'pending' | 'queued' | 'delivered' | 'failed' | 'refused_closed'
  error: string | null
  createdAt: string
  deliveredAt: string | null
}

export interface ScheduleRecord {
  id: string
  projectId: string
  agentId: string
  kind: 'once' | 'recurring'
  everyMs: number | null
  nextAt: string
  payload: Record<string, unknown>
  status: 'pending' | 'running' | 'done' | 'cancelled'
  createdBy: {kind: string; id: string}
  createdAt: string
  updatedAt: string
}

const toMessage = (r: Database['messages']): MessageRecord => ({
  id: r.id,
  projectId: r.project_id,
  agentId: r.agent_id,
  broadcastId: r.broadcast_id,
  sender: {kind: r.sender_kind, id: r.sender_id},
  ingress: r.ingress,
  body: JSON.parse(r.body),
  delivery: r.delivery as MessageRecord['delivery'],
  error: r.error,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
})

/** Messages and schedules. Rows are written only for accepted requests (never for refusals). */
export const messagesRepo = (db: Kysely<Database>) => ({
  async insert(m: MessageRecord): Promise<void> {
    await db
      .insertInto('messages')
      .values({
        id: m.id,
        project_id: m.projectId,
        agent_id: m.agentId,
        broadcast_id: m.broadcastId,
        sender_kind: m.sender.kind,
        sender_id: m.sender.id,
        ingress: m.ingress,
        body: JSON.stringify(m.body),
        delivery: m.delivery,
        error: m.error,
        created_at: m.createdAt,
        delivered_at: m.deliveredAt,
      })
      .execute()
  },
  async setDelivery(id: string, delivery: MessageRecord['delivery'], error: string | null, at: string | null): Promise<void> {
    await db.updateTable('messages').set({delivery, error, delivered_at: at}).where('id', '=', id).execute()
  },
  /** Messages kept for agents whose broker was away, oldest first (partial index of 0028). */
  async queued(limit = 200): Promise<MessageRecord[]> {
    const rows = await db.selectFrom('messages').selectAll().where('delivery', '=', 'queued').orderBy('created_at').orderBy('id').limit(limit).execute()
    return rows.map(toMessage)
  },
  /** Takes a queued message for delivery; false when another replica took it first. */
  async claimQueued(id: string): Promise<boolean> {
    const r = await db.updateTable('messages').set({delivery: 'pending'}).where('id', '=', id).where('delivery', '=', 'queued').executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  },
  async forAgent(agentId: string, limit = 100): Promise<MessageRecord[]> {
    const rows = await db.selectFrom('messages').selectAll().where('agent_id', '=', agentId).orderBy('created_at', 'desc').orderBy('id').limit(limit).execute()
    return rows.map(toMessage)
  },
  async count(): Promise<number> {
    return Number((await db.selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  },
  async insertSchedule(s: ScheduleRecord): Promise<void> {
    await db
      .insertInto('schedules')
      .values({
        id: s.id,
        project_id: s.projectId,
        agent_id: s.agentId,
        kind: s.kind,
        every_ms: s.everyMs,
        next_at: s.nextAt,
        payload: JSON.stringify(s.payload),
        status: s.status,
        created_by_kind: s.createdBy.kind,
        created_by_id: s.createdBy.id,
        created_at: s.createdAt,
        updated_at: s.updatedAt,
      })
      .execute()
  },
  async schedules(projectId: string): Promise<ScheduleRecord[]> {
    const rows = await db.selectFrom('schedules').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute()
    return rows.map(toSchedule)
  },
  async countSchedules(): Promise<number> {
    return Number((await db.selectFrom('schedules').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  },
  /** Pending schedules due at `now`, claimed for this runner (so replicas never fire one twice). */
  async claimDue(now: string, limit = 50): Promise<ScheduleRecord[]> {
    const due = await db.selectFrom('schedules').selectAll().where('status', '=', 'pending').where('next_at', '<=', now).orderBy('next_at').limit(limit).execute()
    const claimed: ScheduleRecord[] = []
    for (const r of due) {
      const res = await db.updateTable('schedules').set({status: 'running', updated_at: now}).where('id', '=', r.id).where('status', '=', 'pending').executeTakeFirst()
      if (Number(res.numUpdatedRows) === 1) claimed.push(toSchedule(r))
    }
    return claimed
  },
  async finishRun(id: string, next: {status: 'pending' | 'done'; nextAt?: string}, now: string): Promise<void> {
    await db
      .updateTable('schedules')
      .set({status: next.status, ...(next.nextAt && {next_at: next.nextAt}), updated_at: now})
      .where('id', '=', id)
      .execute()
  },
  async cancelSchedule(id: string, now: string): Promise<boolean> {
    const res = await db.updateTable('schedules').set({status: 'cancelled', updated_at: now}).where('id', '=', id).where('status', 'in', ['pending', 'running']).executeTakeFirst()
    return Number(res.numUpdatedRows) > 0
  },
})

const toSchedule = (r: {id: string; project_id: string; agent_id: string; kind: string; every_ms: number | null; next_at: string; payload: string; status: string; created_by_kind: string; created_by_id: string; created_at: string; updated_at: string}): ScheduleRecord => ({
  id: r.id,
  projectId: r.project_id,
  agentId: r.agent_id,
  kind: r.kind as ScheduleRecord['kind'],
  everyMs: r.every_ms === null ? null : Number(r.every_ms),
  nextAt: r.next_at,
  payload: JSON.parse(r.payload),
  status: r.status as ScheduleRecord['status'],
  createdBy: {kind: r.created_by_kind, id: r.created_by_id},
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

export type MessagesRepo = ReturnType<typeof messagesRepo>

const AUDIT_INSERT = 'insert into audit_records (id, kind, actor_kind, actor_id, project_id, target, details, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)'

/** The audit insert against `Exec`: a start-up adoption writes one record per hop, 100k at a time (store/pass-transaction.ts). */
export const auditStatements = (x: Exec) => ({
  async insert(a: {id: string; kind: string; actor: {kind: string; id: string}; projectId: string | null; target: string | null; details: Record<string, unknown>; at: string}): Promise<void> {
    await x.run(AUDIT_INSERT, [a.id, a.kind, a.actor.kind, a.actor.id, a.projectId, a.target, JSON.stringify(a.details), a.at])
  },
})

/** Audit records: who did what to which target; never content. */
export const auditRepo = (db: Kysely<Database>) => ({
  ...auditStatements(kyselyExec(db)),
  async list(kind?: string, limit = 100): Promise<Array<{id: string; kind: string; actor: {kind: string; id: string}; projectId: string | null; target: string | null; details: Record<string, unknown>; createdAt: string}>> {
    let q = db.selectFrom('audit_records').selectAll()
    if (kind) q = q.where('kind', '=', kind)
    const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(limit).execute()
    return rows.map((r) => ({id: r.id, kind: r.kind, actor: {kind: r.actor_kind, id: r.actor_id}, projectId: r.project_id, target: r.target, details: JSON.parse(r.details), createdAt: r.created_at}))
  },
  /** The time of the latest record of each kind for each target: `{target: {kind: createdAt}}`. */
  async latestByTarget(kinds: string[], targets: string[]): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>()
    // In slices: a statement's bound parameters are limited (SQLite 32766, PostgreSQL 65535).
    for (let i = 0; i < targets.length && kinds.length; i += 500) {
      const rows = await db
        .selectFrom('audit_records')
        .select(['target', 'kind', (eb) => eb.fn.max('created_at').as('at')])
        .where('kind', 'in', kinds)
        .where('target', 'in', targets.slice(i, i + 500))
        .groupBy(['target', 'kind'])
        .execute()
      for (const r of rows) if (r.target) out.set(r.target, {...out.get(r.target), [r.kind]: String(r.at)})
    }
    return out
  },
})
