import Sqlite from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {ArrayRead} from '../store.js'
import {readPlannerWorld} from './planner-world.js'

/**
 * The packed read of the planner's world against the plain meaning of the rows (the mapping of
 * agents.ts and delegation-edges.ts): frequent and odd values, NULLs, non-ASCII IDs, and values
 * holding the packing's separator (the read is then done row by row).
 */
describe('readPlannerWorld (SQLite)', () => {
  let db: Sqlite.Database
  const reads: string[] = []
  const arrays = async (...rs: ArrayRead[]) => {
    for (const {text, params = [], onRow} of rs) {
      reads.push(text.includes('group_concat') ? 'packed' : 'rows')
      for (const row of db.prepare(text).raw(true).iterate(...params) as IterableIterator<unknown[]>) onRow(row)
    }
  }
  beforeEach(() => {
    reads.length = 0
    db = new Sqlite(':memory:')
    db.exec(`create table agents (id text primary key, project_id text not null, role text not null, deleted_at text, config_readable integer not null default 1,
      applied_role text, assign_mode_service_account integer not null default 0, created_by_kind text not null, created_by_id text not null);
      create table delegation_edges (id text primary key, delegate_agent_id text not null, project_id text not null, delegator_kind text not null, delegator_id text not null,
      role text not null, provenance_version integer not null, source_credential_kind text, ceiling text, ceiling_policy text, ceiling_project_id text, active integer not null)`)
  })
  afterEach(() => db.close())

  const agent = (id: string, o: Record<string, unknown> = {}) =>
    db.prepare('insert into agents values (@id, @project_id, @role, @deleted_at, @config_readable, @applied_role, @assign_mode_service_account, @created_by_kind, @created_by_id)').run({
      id, project_id: 'p1', role: 'full', deleted_at: null, config_readable: 1, applied_role: null, assign_mode_service_account: 0, created_by_kind: 'user', created_by_id: 'u1', ...o,
    })
  const edge = (id: string, agentId: string, o: Record<string, unknown> = {}) =>
    db.prepare('insert into delegation_edges values (@id, @agent, @project_id, @kind, @by, @role, @version, @source, @ceiling, @policy, @ceiling_project, @active)').run({
      id, agent: agentId, project_id: 'p1', kind: 'user', by: 'u1', role: 'full', version: 0, source: null, ceiling: null, policy: null, ceiling_project: null, active: 1, ...o,
    })

  /** The rows' meaning, read plainly. */
  function expected() {
    const agents = (db.prepare('select * from agents order by id').all() as Array<Record<string, unknown>>).map((r) => {
      const readable = r.config_readable === 1
      return {id: r.id, projectId: r.project_id, createdBy: r.created_by_id ? {kind: r.created_by_kind, id: r.created_by_id} : null, role: r.role,
        appliedRole: readable ? (r.applied_role ?? r.role) : null, assignModeServiceAccount: readable && r.assign_mode_service_account === 1, configReadable: readable, deleted: r.deleted_at !== null}
    })
    const edges = (db.prepare('select * from delegation_edges where active = 1').all() as Array<Record<string, unknown>>).map((r) => ({
      id: r.id, delegateAgentId: r.delegate_agent_id, projectId: r.project_id, delegator: {kind: r.delegator_kind, id: r.delegator_id}, role: r.role,
      provenanceVersion: Number(r.provenance_version), sourceCredentialKind: r.source_credential_kind, ceiling: r.ceiling, ceilingPolicy: r.ceiling_policy, ceilingProjectId: r.ceiling_project_id, active: true,
    }))
    return {agents, edges}
  }

  function fill() {
    agent('b2', {role: 'baseline', applied_role: 'readonly', assign_mode_service_account: 1, created_by_kind: 'agent', created_by_id: 'a1'})
    agent('a1', {deleted_at: '2026-01-01T00:00:00.000Z', created_by_id: ''})
    agent('c3', {role: 'odd', config_readable: 0, created_by_kind: 'team', project_id: 'p2'})
    agent('d4', {role: 'none', applied_role: 'none', project_id: 'p2'})
    edge('e1', 'b2', {kind: 'agent', by: 'a1', role: 'baseline'})
    edge('e2', 'c3', {kind: 'team', by: 't', role: 'odd', project_id: 'p2', version: 1, source: 'session', ceiling: '["project.read"]', ceiling_project: 'p2'})
    edge('e3', 'd4', {version: 1, source: 'system_migration', ceiling: '["project.read","agent.read"]', policy: 'v1', ceiling_project: 'p1', project_id: 'p2'})
    edge('e4', 'a1', {version: 1, source: 'system_migration', ceiling: '["project.read","agent.read"]', policy: 'v2'})
    edge('e5', 'b2', {active: 0})
    edge('e6', 'gone', {})
  }

  it('reads agents in ID order and active edges as their rows mean, packed, twice (ceilings as places the second time)', async () => {
    fill()
    expect(await readPlannerWorld(arrays)).toEqual(expected())
    expect(await readPlannerWorld(arrays)).toEqual(expected())
    expect(reads).toEqual(['packed', 'packed', 'packed', 'packed'])
  })

  it('reads non-ASCII IDs packed too', async () => {
    fill()
    agent('é-agent', {project_id: 'prøject', created_by_id: '😀'})
    edge('é-edge', 'é-agent', {by: '😀', project_id: 'prøject'})
    expect(await readPlannerWorld(arrays)).toEqual(expected())
    expect(reads).toEqual(['packed', 'packed'])
  })

  it('reads row by row when a value holds the separator', async () => {
    fill()
    agent('x\x1fy', {created_by_id: 'u\x1f'})
    expect(await readPlannerWorld(arrays)).toEqual(expected())
    expect(reads).toEqual(['packed', 'packed', 'rows', 'rows'])
    reads.length = 0
    db.prepare('delete from agents where id = ?').run('x\x1fy')
    edge('e\x1f7', 'b2', {})
    expect(await readPlannerWorld(arrays)).toEqual(expected())
    expect(reads).toEqual(['packed', 'packed', 'rows', 'rows'])
  })

  it('reads row by row when the packed read fails (a world too large for one text)', async () => {
    fill()
    const tooBig = async (...rs: ArrayRead[]) => {
      if (rs.some((r) => r.text.includes('group_concat'))) throw new Sqlite.SqliteError('string or blob too big', 'SQLITE_TOOBIG')
      return arrays(...rs)
    }
    expect(await readPlannerWorld(tooBig)).toEqual(expected())
    expect(reads).toEqual(['rows', 'rows'])
  })

  it('any other failure of the packed read is the error of the read, not a silent second read', async () => {
    fill()
    const ioError = async (...rs: ArrayRead[]) => {
      if (rs.some((r) => r.text.includes('group_concat'))) throw new Sqlite.SqliteError('disk I/O error', 'SQLITE_IOERR')
      return arrays(...rs)
    }
    await expect(readPlannerWorld(ioError)).rejects.toMatchObject({code: 'SQLITE_IOERR'})
    expect(reads).toEqual([])
  })

  it('an empty world', async () => {
    expect(await readPlannerWorld(arrays)).toEqual({agents: [], edges: []})
    expect(reads).toEqual(['packed', 'packed'])
  })
})
