import {sql, type Kysely, type Selectable} from 'kysely'
import {kyselyExec, type Exec} from '../compiled-statement.js'
import type {Database, DelegationEdgesTable} from '../schema.js'

/**
 * A delegation edge as stored. `ceiling` stays the raw JSON text: whether it is well formed is
 * a domain question (the planner reports `malformed_ceiling`), not a storage one.
 */
export interface EdgeRecord {
  id: string
  delegateAgentId: string
  projectId: string
  delegator: {kind: string; id: string}
  role: string
  provenanceVersion: number
  sourceCredentialKind: string | null
  ceiling: string | null
  ceilingPolicy: string | null
  ceilingProjectId: string | null
  active: boolean
  deactivationCause: string | null
  initiator: {kind: string; id: string} | null
  createdAt: string
  updatedAt: string
}

/** What the walk needs of each agent on a chain. */
export interface ChainAgent {
  id: string
  projectId: string
  role: string
  deleted: boolean
}

/** What an edge means, without its timestamps and bookkeeping: all the planner reads. */
export type EdgeFacts = Omit<EdgeRecord, 'deactivationCause' | 'initiator' | 'createdAt' | 'updatedAt'>

export type NewEdge = Omit<EdgeRecord, 'active' | 'deactivationCause' | 'updatedAt'> & {active?: boolean}

const FACT_COLUMNS = ['id', 'delegate_agent_id', 'project_id', 'delegator_kind', 'delegator_id', 'role', 'provenance_version', 'source_credential_kind', 'ceiling', 'ceiling_policy', 'ceiling_project_id'] as const
type FactRow = Pick<Selectable<DelegationEdgesTable>, (typeof FACT_COLUMNS)[number]>

const toFacts = (r: FactRow, active: boolean): EdgeFacts => ({
  id: r.id,
  delegateAgentId: r.delegate_agent_id,
  projectId: r.project_id,
  delegator: {kind: r.delegator_kind, id: r.delegator_id},
  role: r.role,
  provenanceVersion: Number(r.provenance_version),
  sourceCredentialKind: r.source_credential_kind,
  ceiling: r.ceiling,
  ceilingPolicy: r.ceiling_policy,
  ceilingProjectId: r.ceiling_project_id,
  active,
})

const toEdge = (r: Selectable<DelegationEdgesTable>): EdgeRecord => ({
  ...toFacts(r, Number(r.active) === 1),
  deactivationCause: r.deactivation_cause,
  initiator: r.initiator_kind && r.initiator_id ? {kind: r.initiator_kind, id: r.initiator_id} : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

const toRow = (e: NewEdge): Selectable<DelegationEdgesTable> => ({
  id: e.id,
  delegate_agent_id: e.delegateAgentId,
  project_id: e.projectId,
  delegator_kind: e.delegator.kind,
  delegator_id: e.delegator.id,
  role: e.role,
  provenance_version: e.provenanceVersion,
  source_credential_kind: e.sourceCredentialKind,
  ceiling: e.ceiling,
  ceiling_policy: e.ceilingPolicy,
  ceiling_project_id: e.ceilingProjectId,
  active: e.active === false ? 0 : 1,
  deactivation_cause: null,
  initiator_kind: e.initiator?.kind ?? null,
  initiator_id: e.initiator?.id ?? null,
  created_at: e.createdAt,
  updated_at: e.createdAt,
})

// Bulk inserts stay under SQLite's bound-parameter limit (17 columns a row).
const BATCH = 500

const ROW_COLUMNS = [...FACT_COLUMNS, 'active', 'deactivation_cause', 'initiator_kind', 'initiator_id', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof Selectable<DelegationEdgesTable>>

// The statements a start-up adoption runs once per hop (100k at a time), as SQL text: built and
// compiled once, not per call (compiled-statement.ts).
const INSERT = `insert into delegation_edges (${ROW_COLUMNS.join(', ')}) values (${ROW_COLUMNS.map(() => '?').join(', ')})`
const DEACTIVATE = 'update delegation_edges set active = 0, deactivation_cause = ?, updated_at = ? where id = ? and active = 1'
const ACTIVE_WITH_DELEGATORS = `select * from delegation_edges where active = 1 and (delegate_agent_id = ? or delegate_agent_id in
  (select up.delegator_id from delegation_edges as up where up.delegate_agent_id = ? and up.active = 1 and up.delegator_kind = 'agent'))
  order by delegate_agent_id, id`

const GET = 'select * from delegation_edges where id = ?'

/**
 * The reads and writes a start-up adoption hop runs (100k hops), written once against `Exec`:
 * through Kysely in the repository, or on the connection a bulk pass holds
 * (store/pass-transaction.ts).
 */
export const edgeStatements = (x: Exec) => ({
  /** The row as stored is the row given (no read back): every column is written from `e`. */
  async insert(e: NewEdge): Promise<EdgeRecord> {
    const row = toRow(e)
    await x.run(INSERT, ROW_COLUMNS.map((c) => row[c]))
    return toEdge(row)
  },
  async get(id: string): Promise<EdgeRecord | null> {
    const [r] = await x.all<Selectable<DelegationEdgesTable>>(GET, [id])
    return r ? toEdge(r) : null
  },
  /**
   * The active edges of an agent and of each agent its active edges name as delegator, in one
   * read (a start-up hop re-reads its own and its parent's edges inside its transaction: one
   * query instead of two). Ordered by delegate, then ID.
   */
  async activeWithDelegators(agentId: string): Promise<EdgeRecord[]> {
    return (await x.all<Selectable<DelegationEdgesTable>>(ACTIVE_WITH_DELEGATORS, [agentId, agentId])).map(toEdge)
  },
  /**
   * Deactivates an edge when it is still active; false when it was not (a concurrent writer
   * got there first), so callers can refuse instead of writing a second active edge.
   */
  async deactivate(id: string, cause: string | null, now: string): Promise<boolean> {
    return (await x.run(DEACTIVATE, [cause, now, id])) === 1
  },
})

export const delegationEdgesRepo = (db: Kysely<Database>) => ({
  ...edgeStatements(kyselyExec(db)),
  async insertMany(edges: NewEdge[]): Promise<void> {
    for (let i = 0; i < edges.length; i += BATCH) await db.insertInto('delegation_edges').values(edges.slice(i, i + BATCH).map(toRow)).execute()
  },
  /** Every edge of an agent, active or not, oldest first. */
  async forAgent(agentId: string): Promise<EdgeRecord[]> {
    const rows = await db.selectFrom('delegation_edges').selectAll().where('delegate_agent_id', '=', agentId).orderBy('created_at').orderBy('id').execute()
    return rows.map(toEdge)
  },
  /** The active edges of an agent (one when the invariant holds). */
  async activeFor(agentId: string): Promise<EdgeRecord[]> {
    const rows = await db.selectFrom('delegation_edges').selectAll().where('delegate_agent_id', '=', agentId).where('active', '=', 1).orderBy('id').execute()
    return rows.map(toEdge)
  },
  /**
   * The walk's input in two queries, whatever the depth: the active edges of an agent and of
   * every agent above it through agent delegators (at most `maxDepth` levels; a cycle stops
   * there too), and those agents' project, role and deletion. Duplicates are returned as found.
   */
  async activeChain(agentId: string, maxDepth: number): Promise<{edges: EdgeRecord[]; agents: ChainAgent[]}> {
    const chain = sql`with recursive chain(agent_id, depth) as (
      select cast(${agentId} as text), 0
      union
      select e.delegator_id, c.depth + 1 from chain c
        join delegation_edges e on e.delegate_agent_id = c.agent_id and e.active = 1 and e.delegator_kind = 'agent'
        where c.depth < ${maxDepth})`
    const edges = await sql<Selectable<DelegationEdgesTable>>`${chain} select * from delegation_edges where active = 1 and delegate_agent_id in (select agent_id from chain)`.execute(db)
    const agents = await sql<{id: string; project_id: string; role: string; deleted_at: string | null}>`${chain} select id, project_id, role, deleted_at from agents where id in (select agent_id from chain)`.execute(db)
    return {
      edges: edges.rows.map(toEdge),
      agents: agents.rows.map((r) => ({id: r.id, projectId: r.project_id, role: r.role, deleted: r.deleted_at !== null})),
    }
  },
  /** Every active edge: the planner's input. */
  async listActive(): Promise<EdgeRecord[]> {
    const rows = await db.selectFrom('delegation_edges').selectAll().where('active', '=', 1).execute()
    return rows.map(toEdge)
  },
  /** Every active edge, only the columns that carry its meaning (no timestamps): the planner's bulk read. */
  async listActiveFacts(): Promise<EdgeFacts[]> {
    const rows = await db.selectFrom('delegation_edges').select(FACT_COLUMNS).where('active', '=', 1).execute()
    return rows.map((r) => toFacts(r, true))
  },
  async listAll(): Promise<EdgeRecord[]> {
    const rows = await db.selectFrom('delegation_edges').selectAll().execute()
    return rows.map(toEdge)
  },
  /** Agent IDs that have at least one edge, of any state (the backfill skips them). */
  async agentIdsWithEdges(): Promise<Set<string>> {
    const rows = await db.selectFrom('delegation_edges').select('delegate_agent_id').distinct().execute()
    return new Set(rows.map((r) => r.delegate_agent_id))
  },
  /** Reactivates an inactive edge (a revert restores the original row); false when it was active. */
  async reactivate(id: string, now: string): Promise<boolean> {
    const r = await db.updateTable('delegation_edges').set({active: 1, deactivation_cause: null, updated_at: now}).where('id', '=', id).where('active', '=', 0).executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  },
})

export type DelegationEdgesRepo = ReturnType<typeof delegationEdgesRepo>
