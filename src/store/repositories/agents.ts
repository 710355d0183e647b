import {sql, type Kysely, type Selectable} from 'kysely'
import type {AgentsTable, Database} from '../schema.js'
import type {ArrayReader} from '../store.js'
import type {EdgeFacts} from './delegation-edges.js'
import {translateDbError} from '../db-errors.js'

export interface AgentRecord {
  id: string
  projectId: string
  name: string
  brokerId: string | null
  phase: string
  activity: string | null
  detail: string
  harnessConfig: string
  template: string | null
  task: string | null
  role: string
  runtime: string | null
  runtimeRef: string | null
  config: Record<string, unknown>
  error: string | null
  createdBy: {kind: 'user' | 'agent'; id: string}
  createdAt: string
  updatedAt: string
  lastHeartbeatAt: string | null
  deletedAt: string | null
  /** `open` accepts messages; `closed` refuses them (keys are not affected). */
  messageMode: string
}

const toAgent = (r: Selectable<AgentsTable>): AgentRecord => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  brokerId: r.broker_id,
  phase: r.phase,
  activity: r.activity,
  detail: r.detail,
  harnessConfig: r.harness_config,
  template: r.template,
  task: r.task,
  role: r.role,
  runtime: r.runtime,
  runtimeRef: r.runtime_ref,
  config: JSON.parse(r.config),
  error: r.error,
  createdBy: {kind: r.created_by_kind as 'user' | 'agent', id: r.created_by_id},
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastHeartbeatAt: r.last_heartbeat_at,
  deletedAt: r.deleted_at,
  messageMode: r.message_mode,
})

export interface AgentPatch {
  phase?: string
  activity?: string | null
  detail?: string
  brokerId?: string | null
  runtime?: string | null
  runtimeRef?: string | null
  error?: string | null
  lastHeartbeatAt?: string
  deletedAt?: string
  messageMode?: string
  /** Reincarnation: a new role, and the user who re-recorded the agent's delegation. */
  role?: string
  createdBy?: {kind: string; id: string}
}

export interface AgentFilter {
  projectIds?: string[]
  createdById?: string
  phase?: string
  brokerId?: string
  includeDeleted?: boolean
}

/** An agent as the delegation planner reads it; `config` stays raw text. */
export interface PlannerFactsRow {
  id: string
  projectId: string
  createdByKind: string
  createdById: string
  role: string
  config: string
  deleted: boolean
}

/**
 * An agent as the delegation planner decides it, with its config already read (the joined
 * SQLite read builds these directly; the planner's `agentFacts` builds them from a
 * `PlannerFactsRow` elsewhere).
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

async function plannerFacts(db: Kysely<Database>, ids?: string[]): Promise<PlannerFactsRow[]> {
  let q = db.selectFrom('agents').select(['id', 'project_id', 'created_by_kind', 'created_by_id', 'role', 'config', 'deleted_at'])
  if (ids) q = q.where('id', 'in', ids.length ? ids : [''])
  // No ORDER BY: on SQLite it walks the ID index with a row lookup each (a third slower at
  // 100k agents); the planner sorts its own output.
  const rows = await q.execute()
  return rows.map((r) => ({id: r.id, projectId: r.project_id, createdByKind: r.created_by_kind, createdById: r.created_by_id, role: r.role, config: r.config, deleted: r.deleted_at !== null}))
}

export const agentsRepo = (db: Kysely<Database>, driver: 'sqlite' | 'postgres', arrays: ArrayReader = null) => ({
  async insert(a: Omit<AgentRecord, 'deletedAt' | 'lastHeartbeatAt' | 'messageMode'>): Promise<AgentRecord> {
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
          error: a.error,
          created_by_kind: a.createdBy.kind,
          created_by_id: a.createdBy.id,
          created_at: a.createdAt,
          updated_at: a.updatedAt,
          message_mode: 'open',
        })
        .returningAll()
        .executeTakeFirstOrThrow()
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
  async list(f: AgentFilter): Promise<AgentRecord[]> {
    let q = db.selectFrom('agents').selectAll()
    if (!f.includeDeleted) q = q.where('deleted_at', 'is', null)
    if (f.projectIds) {
      if (f.projectIds.length === 0) return []
      q = q.where('project_id', 'in', f.projectIds)
    }
    if (f.createdById) q = q.where('created_by_id', '=', f.createdById)
    if (f.phase) q = q.where('phase', '=', f.phase)
    if (f.brokerId) q = q.where('broker_id', '=', f.brokerId)
    const rows = await q.orderBy('created_at').orderBy('id').execute()
    return rows.map(toAgent)
  },
  /**
   * Every agent (deleted too), or those of `ids`, only the columns the delegation planner reads;
   * config stays raw text. The start-up migration reads one chain at a time with `ids`.
   */
  listPlannerFacts(ids?: string[]): Promise<PlannerFactsRow[]> {
    return plannerFacts(db, ids)
  },
  /**
   * Every agent (deleted too) as the delegation planner decides it, and every active edge, on
   * SQLite (null elsewhere: the planner then reads `listPlannerFacts` and the edges apart). The
   * config is decided by SQLite's JSON functions instead of 100k configs crossing into JS. Same
   * rules as the planner's `configFacts` (the delegation-planner test holds them together):
   * unreadable = not valid JSON, not an object, or `applied` present and not an object.
   *
   * Built for 100k agents: two table scans visited as value arrays (a join walks the edges in
   * index order, which costs more than both scans once adoption has rewritten the edges), and
   * the applied role comes back NULL when it is the agent's role. Values with few distinct texts
   * (projects, roles, kinds, ceilings) are interned, so 100k copies die young and the planner
   * compares and hashes one string each.
   */
  async listPlannerWorld(): Promise<{agents: PlannerAgentFacts[]; edges: EdgeFacts[]} | null> {
    if (driver === 'postgres' || !arrays) return null
    const v = (path: string) => `case when json_valid(config) then json_extract(config, '$.applied.${path}.value') end`
    const t = (path: string) => `case when json_valid(config) then json_type(config, '$.applied.${path}.value') end`
    const agents: PlannerAgentFacts[] = []
    const edges: EdgeFacts[] = []
    const texts = new Map<string, string>()
    const intern = <T extends string | null>(s: T): T => {
      if (s === null) return s
      const hit = texts.get(s)
      if (hit !== undefined) return hit as T
      texts.set(s, s)
      return s
    }
    const agent = (r: unknown[]) => {
      const role = intern(r[2] as string)
      const readable = r[4] === 1
      const createdById = r[8] as string | null
      agents.push({
        id: r[0] as string,
        projectId: intern(r[1] as string),
        createdBy: createdById ? {kind: intern(r[7] as string), id: createdById} : null,
        role,
        appliedRole: readable ? (intern(r[5] as string | null) ?? role) : null,
        assignModeServiceAccount: readable && r[6] === 1,
        configReadable: readable,
        deleted: r[3] === 1,
      })
    }
    const edge = (r: unknown[]) => {
      edges.push({
        id: r[0] as string,
        delegateAgentId: r[1] as string,
        projectId: intern(r[2] as string),
        delegator: {kind: intern(r[3] as string), id: r[4] as string},
        role: intern(r[5] as string),
        provenanceVersion: Number(r[6]),
        sourceCredentialKind: intern(r[7] as string | null),
        ceiling: intern(r[8] as string | null),
        ceilingPolicy: intern(r[9] as string | null),
        ceilingProjectId: intern(r[10] as string | null),
        active: true,
      })
    }
    // Read together: agents and edges of one state of the database, as a joined query gives.
    await arrays(
      {
        text: `select id, project_id, role, deleted_at is not null,
          case when json_valid(config) and json_type(config) = 'object' and coalesce(json_type(config, '$.applied'), 'object') = 'object' then 1 else 0 end,
          case when ${t('defaultAgentRole')} = 'text' then nullif(${v('defaultAgentRole')}, role) end,
          case when ${v('defaultCloudIdentityMode')} = 'Assign' and ${t('defaultCloudIdentityServiceAccountId')} = 'text' and ${v('defaultCloudIdentityServiceAccountId')} <> '' then 1 else 0 end,
          created_by_kind, created_by_id
        from agents`,
        onRow: agent,
      },
      {
        text: `select id, delegate_agent_id, project_id, delegator_kind, delegator_id, role, provenance_version, source_credential_kind, ceiling, ceiling_policy, ceiling_project_id
        from delegation_edges where active = 1`,
        onRow: edge,
      },
    )
    return {agents, edges}
  },
  async update(id: string, patch: AgentPatch, now: string): Promise<AgentRecord | null> {
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
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return r ? toAgent(r) : null
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
})

export type AgentsRepo = ReturnType<typeof agentsRepo>
