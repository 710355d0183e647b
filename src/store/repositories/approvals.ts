import type {Kysely, Selectable} from 'kysely'
import type {ApprovalDecider, ApprovalDto, ApprovalState} from '../../api/approval.js'
import type {Database} from '../schema.js'
import type {ApprovalsTable} from '../schema-approvals.js'
import {kyselyExec} from '../compiled-statement.js'

const toApproval = (r: Selectable<ApprovalsTable>): ApprovalDto => ({
  id: r.id,
  agentId: r.agent_id,
  agentName: r.agent_name,
  projectId: r.project_id,
  tool: r.tool,
  summary: r.summary,
  input: JSON.parse(r.input),
  state: r.state as ApprovalState,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  decidedBy: r.decided_by ? (JSON.parse(r.decided_by) as ApprovalDecider) : null,
  decidedAt: r.decided_at,
  reason: r.reason,
})

export interface ApprovalFilter {
  state?: ApprovalState
  agentId?: string
  /** Agents of these projects (null: every project). */
  projectIds?: string[] | null
  /** Agents whose parent is this agent (teams). */
  parentId?: string
  limit?: number
}

/** The agent as its `approval_requested` event row shows it. */
export interface ApprovalEventAgent {
  phase: string
  detail: string
  error: string | null
}

// Whether an agent has a pending approval: a text written once (no query built and compiled per
// read); the status writer's transaction runs it too (agent-status-write.ts).
export const PENDING_PROBE = "select id from approvals where agent_id = ? and state = 'pending' limit 1"

/**
 * Approvals. A pending one is inserted with its `approval_requested` row of the agent event log
 * (same connection: in a transaction both commit together); `onAgentEvent` wakes the feeds.
 * Every change of state is one conditional update on `state = 'pending'`, so of a decision, an
 * answer at the terminal and an expiry racing for one approval exactly one wins.
 */
export const approvalsRepo = (db: Kysely<Database>, onAgentEvent?: () => void) => ({
  async insert(a: ApprovalDto, event: ApprovalEventAgent | null): Promise<void> {
    await db
      .insertInto('approvals')
      .values({
        id: a.id,
        agent_id: a.agentId,
        project_id: a.projectId,
        agent_name: a.agentName,
        tool: a.tool,
        summary: a.summary,
        input: JSON.stringify(a.input ?? null),
        state: a.state,
        created_at: a.createdAt,
        expires_at: a.expiresAt,
        decided_by: a.decidedBy ? JSON.stringify(a.decidedBy) : null,
        decided_at: a.decidedAt,
        reason: a.reason,
      })
      .execute()
    if (!event) return
    // The agent as it is while it waits: no state is entered (prev equals now), so consumers of
    // agent changes see nothing new in this row; its `approval` makes it `approval_requested`.
    await db
      .insertInto('agent_events')
      .values({
        agent_id: a.agentId,
        project_id: a.projectId,
        name: a.agentName,
        phase: event.phase,
        activity: 'waiting_for_input',
        detail: event.detail,
        prev_phase: event.phase,
        prev_activity: 'waiting_for_input',
        error: event.error,
        prev_error: event.error,
        approval: JSON.stringify(a),
        at: a.createdAt,
      })
      .execute()
    onAgentEvent?.()
  },

  async get(id: string): Promise<ApprovalDto | null> {
    const r = await db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toApproval(r) : null
  },

  /** Oldest first. */
  async list(f: ApprovalFilter): Promise<ApprovalDto[]> {
    if (f.projectIds && f.projectIds.length === 0) return []
    let q = db.selectFrom('approvals').selectAll('approvals')
    if (f.state) q = q.where('approvals.state', '=', f.state)
    if (f.agentId) q = q.where('approvals.agent_id', '=', f.agentId)
    if (f.projectIds) q = q.where('approvals.project_id', 'in', f.projectIds)
    if (f.parentId) q = q.innerJoin('agents', 'agents.id', 'approvals.agent_id').where('agents.parent_id', '=', f.parentId)
    const rows = await q.orderBy('approvals.created_at').orderBy('approvals.id').limit(f.limit ?? 500).execute()
    return rows.map(toApproval)
  },

  /** Decides a pending approval that has not expired; null when it was not (any more). */
  async decide(id: string, d: {state: ApprovalState; decidedBy: ApprovalDecider; at: string; reason: string | null}): Promise<ApprovalDto | null> {
    const r = await db
      .updateTable('approvals')
      .set({state: d.state, decided_by: JSON.stringify(d.decidedBy), decided_at: d.at, reason: d.reason})
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('expires_at', '>', d.at)
      .returningAll()
      .executeTakeFirst()
    return r ? toApproval(r) : null
  },

  /** Marks pending approvals past their `expires_at` expired (of one agent, or one approval); returns their IDs. */
  async expireDue(now: string, where: {agentId?: string; id?: string; projectIds?: string[] | null} = {}): Promise<string[]> {
    let q = db.updateTable('approvals').set({state: 'expired', decided_at: now}).where('state', '=', 'pending').where('expires_at', '<=', now)
    if (where.agentId) q = q.where('agent_id', '=', where.agentId)
    if (where.id) q = q.where('id', '=', where.id)
    if (where.projectIds) {
      if (where.projectIds.length === 0) return []
      q = q.where('project_id', 'in', where.projectIds)
    }
    return (await q.returning('id').execute()).map((r) => r.id)
  },

  /** The terminal answered: every pending approval of the agent becomes `answered`; returns their IDs. */
  async answerPending(agentId: string, at: string): Promise<string[]> {
    // Called when the status writer's transaction saw a pending approval; read again first, as
    // another report may have answered it since, which keeps this off SQLite's write lock (and
    // PostgreSQL's row locks) then. A request racing this read is settled by the next report.
    const [any] = await kyselyExec(db).all(PENDING_PROBE, [agentId])
    if (!any) return []
    const rows = await db
      .updateTable('approvals')
      .set({state: 'answered', decided_by: JSON.stringify({kind: 'terminal'}), decided_at: at})
      .where('agent_id', '=', agentId)
      .where('state', '=', 'pending')
      .returning('id')
      .execute()
    return rows.map((r) => r.id)
  },
})

export type ApprovalsRepo = ReturnType<typeof approvalsRepo>
