import {sql, type Kysely, type Selectable} from 'kysely'
import type {AgentsTable, Database} from '../schema.js'
import type {ArrayReader} from '../store.js'
import type {EdgeFacts} from './delegation-edges.js'
import {translateDbError} from '../db-errors.js'
import {kyselyExec, type Exec} from '../compiled-statement.js'
import {agentConfigFacts} from '../agent-config-facts.js'
import {toAgent, type AgentFilter, type AgentPatch, type AgentRecord} from './agent-rows.js'
import {TREE_LEVEL, type TreeLevelRow} from './agent-tree-rows.js'
import type {AgentLimits} from '../../api/dto.js'
import {appendAgentEvent} from './agent-events.js'
import {readPlannerWorld} from './planner-world.js'

export type {AgentCheck, AgentFilter, AgentPatch, AgentRecord} from './agent-rows.js'

/** One step of an agent's status reports (the status writer's; undefined fields stay as they are). */
export interface StatusStep {
  phase?: string
  activity?: string | null
  detail?: string
  error?: string | null
  heartbeatAt: string
}

/**
 * An agent as the delegation planner decides it, its config's facts read from their columns
 * (`listPlannerWorld` on SQLite, planner-world.ts; `listPlannerAgents` anywhere, through `plannerAgent`).
 */
export interface PlannerAgentFacts {
  id: string
  projectId: string
  /** The recorded creator; null when the row names none. */
  createdBy: {kind: string; id: string} | null
  role: string
  /** `config.applied.defaultAgentRole.value`, else the agent's role; null when the config is unreadable. */
  appliedRole: string | null
  /** Rule 1: the applied config has `defaultCloudIdentityMode` Assign with a service account ID. */
  assignModeServiceAccount: boolean
  configReadable: boolean
  deleted: boolean
}

/**
 * The agent columns the delegation planner reads, as one value array: the config facts come
 * from their columns (agent-config-facts.ts), and the applied role as NULL when it is the
 * agent's role (one string fewer per agent), integers for the flags on both databases.
 */
const PLANNER_AGENT_COLUMNS = `id, project_id, role, case when deleted_at is null then 0 else 1 end as deleted, config_readable, nullif(applied_role, role) as applied_role,
  assign_mode_service_account, created_by_kind, created_by_id`
type PlannerAgentRow = [id: string, projectId: string, role: string, deleted: number, readable: number, appliedRole: string | null, assignModeServiceAccount: number, createdByKind: string, createdById: string | null]

function plannerAgent(r: PlannerAgentRow): PlannerAgentFacts {
  const role = r[2]
  const readable = r[4] === 1
  return {
    id: r[0],
    projectId: r[1],
    createdBy: r[8] ? {kind: r[7], id: r[8]} : null,
    role,
    appliedRole: readable ? (r[5] ?? role) : null,
    assignModeServiceAccount: readable && r[6] === 1,
    configReadable: readable,
    deleted: r[3] === 1,
  }
}

const plannerAgentOfRow = (r: Record<string, unknown>): PlannerAgentFacts =>
  plannerAgent([r.id, r.project_id, r.role, Number(r.deleted), Number(r.config_readable), r.applied_role, Number(r.assign_mode_service_account), r.created_by_kind, r.created_by_id] as PlannerAgentRow)

/** The planner facts of some agents, against `Exec`: a start-up adoption hop re-reads its own and its parent's (store/pass-transaction.ts). */
export const plannerAgentStatements = (x: Exec) => ({
  async listPlannerAgents(ids: string[]): Promise<PlannerAgentFacts[]> {
    if (ids.length === 0) return []
    return (await x.all<Record<string, unknown>>(`select ${PLANNER_AGENT_COLUMNS} from agents where id in (${ids.map(() => '?').join(', ')})`, ids)).map(plannerAgentOfRow)
  },
})

export type EventColumns = {phase: string; activity: string | null; detail: string; error: string | null; deleted_at: string | null}

/** Whether two snapshots differ in a field whose change is an agent event. */
export const eventChanged = (b: ReturnType<typeof snapshotOf>, a: ReturnType<typeof snapshotOf>) => b.phase !== a.phase || b.activity !== a.activity || b.detail !== a.detail || b.error !== a.error || b.deleted !== a.deleted

/** Fields whose change is an agent event (agent_events). */
export const snapshotOf = (r: EventColumns) => ({phase: r.phase, activity: r.activity, detail: r.detail, error: r.error, deleted: r.deleted_at !== null})

/**
 * `onEvent` is told when a write appended an agent event, so the store can wake other replicas'
 * event feeds once the write is committed.
 */
export const agentsRepo = (db: Kysely<Database>, driver: 'sqlite' | 'postgres', arrays: ArrayReader = null, onEvent: () => void = () => {}) => ({
  async insert(a: Omit<AgentRecord, 'deletedAt' | 'lastHeartbeatAt' | 'messageMode' | 'workspace' | 'image' | 'sandbox' | 'turns' | 'usage' | 'parent' | 'limits' | 'group' | 'checkCommand' | 'check'> & {parent?: AgentRecord['parent']; limits?: AgentLimits | null; group?: string | null; checkCommand?: string | null}): Promise<AgentRecord> {
    const facts = agentConfigFacts(a.config)
    try {
      const r = await db
        .insertInto('agents')
        .values({
          id: a.id,
          project_id: a.projectId,
          name: a.name,
          broker_id: a.brokerId,
          phase: a.phase,
          activity: a.activity,
          detail: a.detail,
          harness_config: a.harnessConfig,
          template: a.template,
          task: a.task,
          role: a.role,
          runtime: a.runtime,
          runtime_ref: a.runtimeRef,
          config: JSON.stringify(a.config),
          config_readable: facts.readable ? 1 : 0,
          applied_role: facts.appliedRole,
          assign_mode_service_account: facts.assignModeServiceAccount ? 1 : 0,
          error: a.error,
          created_by_kind: a.createdBy.kind,
          created_by_id: a.createdBy.id,
          created_at: a.createdAt,
          updated_at: a.updatedAt,
          message_mode: 'open',
          parent_id: a.parent?.id ?? null,
          parent_name: a.parent?.name ?? null,
          limits: a.limits ? JSON.stringify(a.limits) : null,
          group_name: a.group ?? null,
          check_command: a.checkCommand ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      await appendAgentEvent(db, null, {id: r.id, projectId: r.project_id, name: r.name, ...snapshotOf(r)}, r.updated_at)
      onEvent()
      return toAgent(r)
    } catch (err) {
      translateDbError(err, 'agent')
    }
  },
  async get(id: string): Promise<AgentRecord | null> {
    const r = await db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toAgent(r) : null
  },
  /** A live agent by name in a project. */
  async getByName(projectId: string, name: string): Promise<AgentRecord | null> {
    const r = await db.selectFrom('agents').selectAll().where('project_id', '=', projectId).where('name', '=', name).where('deleted_at', 'is', null).executeTakeFirst()
    return r ? toAgent(r) : null
  },
  /**
   * Live agents whose ID starts with `prefix` (lower-case hex and dashes only: no LIKE wildcard
   * can reach the pattern), in `projectId` when given; at most `limit`, enough to tell unique.
   */
  async byIdPrefix(prefix: string, projectId?: string, limit = 2): Promise<AgentRecord[]> {
    if (!/^[0-9a-f-]+$/.test(prefix)) return []
    let q = db.selectFrom('agents').selectAll().where('id', 'like', `${prefix}%`).where('deleted_at', 'is', null)
    if (projectId) q = q.where('project_id', '=', projectId)
    return (await q.orderBy('id').limit(limit).execute()).map(toAgent)
  },
  /** Teams: the live children of `parentIds`, by creation (the tree route on PostgreSQL). */
  async childrenOf(parentIds: string[]): Promise<AgentRecord[]> {
    return this.list({parentIds})
  },
  /**
   * Teams, the tree route: the live children in `projectId` of `parentIds`, by creation, each
   * with its node's JSON built by SQLite (agent-tree-rows.ts); null where that is not offered
   * (PostgreSQL: the caller reads `childrenOf` and views the records).
   */
  async treeLevel(projectId: string, parentIds: string[]): Promise<TreeLevelRow[] | null> {
    if (driver === 'postgres' || !arrays) return null
    if (parentIds.length === 0) return []
    const out: TreeLevelRow[] = []
    await arrays({text: TREE_LEVEL, params: [projectId, JSON.stringify(parentIds)], onRow: (v) => out.push(v as TreeLevelRow)})
    return out
  },
  async list(f: AgentFilter): Promise<AgentRecord[]> {
    let q = db.selectFrom('agents').selectAll()
    if (!f.includeDeleted) q = q.where('deleted_at', 'is', null)
    if (f.ids) {
      if (f.ids.length === 0) return []
      q = q.where('id', 'in', f.ids)
    }
    if (f.projectIds) {
      if (f.projectIds.length === 0) return []
      q = q.where('project_id', 'in', f.projectIds)
    }
    if (f.createdById) q = q.where('created_by_id', '=', f.createdById)
    if (f.parentIds) {
      if (f.parentIds.length === 0) return []
      q = q.where('parent_id', 'in', f.parentIds)
    }
    if (f.group !== undefined) q = q.where('group_name', '=', f.group)
    if (f.phase) q = q.where('phase', '=', f.phase)
    if (f.brokerId) q = q.where('broker_id', '=', f.brokerId)
    const rows = await q.orderBy('created_at').orderBy('id').execute()
    return rows.map(toAgent)
  },
  /**
   * Every agent (deleted too) with its role and recorded creator: what the delegation-edge
   * backfill writes an edge from. Only columns every schema since agents existed has (a legacy
   * fixture runs the backfill on the schema of the release before provenance).
   */
  async listCreators(): Promise<Array<{id: string; projectId: string; role: string; createdBy: {kind: string; id: string} | null}>> {
    const rows = await db.selectFrom('agents').select(['id', 'project_id', 'role', 'created_by_kind', 'created_by_id']).execute()
    return rows.map((r) => ({id: r.id, projectId: r.project_id, role: r.role, createdBy: r.created_by_id ? {kind: r.created_by_kind, id: r.created_by_id} : null}))
  },
  /** Every agent (deleted too), or those of `ids`, as the delegation planner decides it. */
  async listPlannerAgents(ids?: string[]): Promise<PlannerAgentFacts[]> {
    if (ids) return plannerAgentStatements(kyselyExec(db)).listPlannerAgents(ids)
    const rows = await sql<Record<string, unknown>>`select ${sql.raw(PLANNER_AGENT_COLUMNS)} from agents`.execute(db)
    return rows.rows.map(plannerAgentOfRow)
  },
  /**
   * Every agent (deleted too) as the delegation planner decides it, and every active edge, on
   * SQLite (null elsewhere: the planner then reads `listPlannerAgents` and the edges apart).
   * Built for 100k agents: two table scans as value arrays, frequent texts as codes
   * (planner-world.ts).
   */
  async listPlannerWorld(): Promise<{agents: PlannerAgentFacts[]; edges: EdgeFacts[]} | null> {
    if (driver === 'postgres' || !arrays) return null
    return readPlannerWorld(arrays)
  },
  async update(id: string, patch: AgentPatch, now: string): Promise<AgentRecord | null> {
    // Only writes that can change what an event carries read the row before.
    const eventful = patch.phase !== undefined || patch.activity !== undefined || patch.detail !== undefined || patch.error !== undefined || patch.deletedAt !== undefined
    const before = eventful ? await db.selectFrom('agents').select(['phase', 'activity', 'detail', 'error', 'deleted_at']).where('id', '=', id).executeTakeFirst() : undefined
    const r = await db
      .updateTable('agents')
      .set({
        ...(patch.phase !== undefined && {phase: patch.phase}),
        ...(patch.activity !== undefined && {activity: patch.activity}),
        ...(patch.detail !== undefined && {detail: patch.detail}),
        ...(patch.brokerId !== undefined && {broker_id: patch.brokerId}),
        ...(patch.runtime !== undefined && {runtime: patch.runtime}),
        ...(patch.runtimeRef !== undefined && {runtime_ref: patch.runtimeRef}),
        ...(patch.error !== undefined && {error: patch.error}),
        ...(patch.lastHeartbeatAt !== undefined && {last_heartbeat_at: patch.lastHeartbeatAt}),
        ...(patch.deletedAt !== undefined && {deleted_at: patch.deletedAt}),
        ...(patch.messageMode !== undefined && {message_mode: patch.messageMode}),
        ...(patch.role !== undefined && {role: patch.role}),
        ...(patch.createdBy !== undefined && {created_by_kind: patch.createdBy.kind, created_by_id: patch.createdBy.id}),
        ...(patch.workspace !== undefined && {workspace: patch.workspace === null ? null : JSON.stringify(patch.workspace)}),
        ...(patch.image !== undefined && {image: patch.image}),
        ...(patch.sandbox !== undefined && {sandbox: patch.sandbox}),
        ...(patch.turns !== undefined && {turns: patch.turns}),
        ...(patch.usage !== undefined && {usage: patch.usage === null ? null : JSON.stringify(patch.usage)}),
        ...(patch.check !== undefined && {check_result: patch.check === null ? null : JSON.stringify(patch.check)}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    if (r && before) {
      const b = snapshotOf(before)
      const a = snapshotOf(r)
      if (eventChanged(b, a)) {
        await appendAgentEvent(db, b, {id: r.id, projectId: r.project_id, name: r.name, ...a}, now)
        onEvent()
      }
    }
    return r ? toAgent(r) : null
  },
  /** Counts one more ended turn, atomically (replicas may count concurrently); answers the new count. */
  async incrementTurns(id: string, now: string): Promise<number | null> {
    const r = await db
      .updateTable('agents')
      .set((eb) => ({turns: eb('turns', '+', 1), updated_at: now}))
      .where('id', '=', id)
      .returning('turns')
      .executeTakeFirst()
    return r ? Number(r.turns) : null
  },
  /** Live agents counted against quotas: not deleted and not stopped or failed. */
  async countActive(by: {projectId?: string; brokerId?: string}): Promise<number> {
    let q = db.selectFrom('agents').select((eb) => eb.fn.countAll().as('n')).where('deleted_at', 'is', null).where('phase', 'not in', ['stopped', 'error'])
    if (by.projectId) q = q.where('project_id', '=', by.projectId)
    if (by.brokerId) q = q.where('broker_id', '=', by.brokerId)
    return Number((await q.executeTakeFirstOrThrow()).n)
  },
  async countByProject(projectId: string): Promise<number> {
    const r = await db.selectFrom('agents').select((eb) => eb.fn.countAll().as('n')).where('project_id', '=', projectId).where('deleted_at', 'is', null).executeTakeFirstOrThrow()
    return Number(r.n)
  },
  async insertToken(t: {id: string; agentId: string; tokenHash: string; scopes: string[]; now: string; expiresAt: string}): Promise<void> {
    await db.insertInto('agent_tokens').values({id: t.id, agent_id: t.agentId, token_hash: t.tokenHash, scopes: JSON.stringify(t.scopes), created_at: t.now, expires_at: t.expiresAt, revoked_at: null}).execute()
  },
  async tokenByHash(hash: string): Promise<{id: string; agentId: string; scopes: string[]; expiresAt: string; revokedAt: string | null} | null> {
    const r = await db.selectFrom('agent_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst()
    return r ? {id: r.id, agentId: r.agent_id, scopes: JSON.parse(r.scopes), expiresAt: r.expires_at, revokedAt: r.revoked_at} : null
  },
  async revokeTokens(agentId: string, now: string): Promise<void> {
    await db.updateTable('agent_tokens').set({revoked_at: now}).where('agent_id', '=', agentId).where('revoked_at', 'is', null).execute()
  },
  /** Revokes the agent's live tokens but those with the given hashes; answers how many it revoked. */
  async revokeTokensExcept(agentId: string, keepHashes: string[], now: string): Promise<number> {
    const r = await db.updateTable('agent_tokens').set({revoked_at: now}).where('agent_id', '=', agentId).where('revoked_at', 'is', null).where('token_hash', 'not in', keepHashes).executeTakeFirst()
    return Number(r.numUpdatedRows)
  },
  async putLogArchive(agentId: string, content: string, now: string): Promise<void> {
    await db
      .insertInto('agent_log_archives')
      .values({agent_id: agentId, content, size: content.length, created_at: now})
      .onConflict((oc) => oc.column('agent_id').doUpdateSet({content, size: content.length, created_at: now}))
      .execute()
  },
  async logArchive(agentId: string): Promise<string | null> {
    const r = await db.selectFrom('agent_log_archives').select('content').where('agent_id', '=', agentId).executeTakeFirst()
    return r?.content ?? null
  },
  /** Removes the archived output of agents deleted before `beforeIso`. */
  async pruneLogArchives(beforeIso: string): Promise<void> {
    await db.deleteFrom('agent_log_archives').where('agent_id', 'in', db.selectFrom('agents').select('id').where('deleted_at', 'is not', null).where('deleted_at', '<', beforeIso)).execute()
  },
})

export type AgentsRepo = ReturnType<typeof agentsRepo>
