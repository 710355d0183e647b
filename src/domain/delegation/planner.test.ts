import {describe, expect, it} from 'vitest'
import type {EdgeFacts, EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {planAdoption, planFingerprint, type AgentFacts, type PlannedHop, type World} from './planner.js'
import {POLICY_V1} from './policy-v1.js'
import {MAX_WALK_DEPTH} from './types.js'

const UNRECORDED = {provenanceVersion: 0, sourceCredentialKind: null, ceiling: null, ceilingPolicy: null, ceilingProjectId: null}

// A small in-memory world: users u1 (active) and u2 (suspended), project p1 unless said otherwise.
function world(): World & {agent(id: string, o?: Partial<AgentFacts>): void; edge(agentId: string, o?: Partial<EdgeRecord>): EdgeFacts} {
  const w: World = {agents: new Map(), activeEdges: new Map(), users: new Map([['u1', {status: 'active'}], ['u2', {status: 'suspended'}]])}
  let n = 0
  return {
    ...w,
    agent(id, o = {}) {
      w.agents.set(id, {id, projectId: 'p1', createdBy: {kind: 'user', id: 'u1'}, role: 'full', appliedRole: 'full', assignModeServiceAccount: false, configReadable: true, deleted: false, ...o})
    },
    edge(agentId, o = {}) {
      // A clean version-0 row from the agent's creator unless `o` says otherwise (the planner
      // reads no timestamps, so a row may carry none, or any text in them).
      const a = w.agents.get(agentId)
      const e: EdgeFacts = {id: `e${++n}`, delegateAgentId: agentId, projectId: a?.projectId ?? 'p1', delegator: a?.createdBy ?? {kind: 'user', id: 'u1'}, role: a?.role ?? 'full', ...UNRECORDED, active: true, ...o}
      w.activeEdges.set(agentId, [...(w.activeEdges.get(agentId) ?? []), e])
      return e
    },
  }
}

/** Agent `id` created by agent `parent` with a clean version-0 edge. */
function child(w: ReturnType<typeof world>, id: string, parent: string, o: Partial<AgentFacts> = {}): void {
  w.agent(id, {createdBy: {kind: 'agent', id: parent}, ...o})
  w.edge(id)
}

const hopOf = (hops: PlannedHop[], agentId: string) => hops.find((h) => h.agentId === agentId)
const verdict = (w: World, agentId: string) => {
  const h = hopOf(planAdoption(w), agentId)
  return h && [h.outcome, h.reason]
}
const adoptedRow = (ceiling: string[]) => ({provenanceVersion: 1, sourceCredentialKind: 'system_migration', ceiling: JSON.stringify(ceiling), ceilingPolicy: 'v1', ceilingProjectId: 'p1'})

describe('planner outcomes', () => {
  it('adopts a clean unrecorded hop on a valid path with the V1 row of its role', () => {
    const w = world()
    w.agent('a')
    w.edge('a')
    const h = hopOf(planAdoption(w), 'a')!
    expect([h.outcome, h.reason, h.depth, h.beforeCeiling]).toEqual(['adopt', null, 0, null])
    expect(h.afterCeiling).toEqual([...POLICY_V1.full])
    expect(h.afterCeiling).not.toContain('agent.identity_token') // rule 4
  })

  it('recognizes an adopted row, and reports one above its role row without narrowing it', () => {
    const w = world()
    w.agent('ok', {role: 'readonly'})
    w.edge('ok', adoptedRow([...POLICY_V1.readonly]))
    w.agent('above', {role: 'readonly'})
    w.edge('above', adoptedRow([...POLICY_V1.readonly, 'secret.use']))
    const hops = planAdoption(w)
    expect([hopOf(hops, 'ok')!.outcome, hopOf(hops, 'ok')!.afterCeiling]).toEqual(['recognized', null])
    expect(hopOf(hops, 'above')!.outcome).toBe('recognized_above_policy')
    expect(hopOf(hops, 'above')!.beforeCeiling).toContain('secret.use')
  })

  it('leaves a recorded row as recorded and never writes an after-ceiling for it', () => {
    const w = world()
    w.agent('a')
    w.edge('a', {provenanceVersion: 1, sourceCredentialKind: 'session', ceiling: '["project.read"]'})
    const h = hopOf(planAdoption(w), 'a')!
    expect([h.outcome, h.beforeCeiling, h.afterCeiling]).toEqual(['recorded', ['project.read'], null])
  })
})

describe('policy V1 rules in the plan', () => {
  it('rule 2: the lower of edge role and applied role picks the row; the edge role is reported unchanged', () => {
    const w = world()
    w.agent('a', {role: 'full', appliedRole: 'readonly'})
    w.edge('a')
    const h = hopOf(planAdoption(w), 'a')!
    expect([h.role, h.afterCeiling]).toEqual(['full', [...POLICY_V1.readonly]])
  })

  it('rule 1: an assign-mode service account adds the two service-account permissions', () => {
    const w = world()
    w.agent('a', {role: 'baseline', appliedRole: 'baseline', assignModeServiceAccount: true})
    w.edge('a')
    expect(hopOf(planAdoption(w), 'a')!.afterCeiling).toEqual(expect.arrayContaining(['cloud_service_account.assign', 'cloud_service_account.use']))
  })

  it('rule 3: a child is bounded by its parent recorded ceiling, or by the parent planned in the same plan', () => {
    const w = world()
    w.agent('rec')
    w.edge('rec', {provenanceVersion: 1, sourceCredentialKind: 'session', ceiling: '["agent.create","agent.read","project.read"]'})
    child(w, 'c1', 'rec')
    w.agent('ro', {role: 'readonly', appliedRole: 'readonly'})
    w.edge('ro')
    child(w, 'c2', 'ro')
    const hops = planAdoption(w)
    // agent.read is in the parent's ceiling but in no V1 row; the rest of the full row is not in the parent's.
    expect(hopOf(hops, 'c1')!.afterCeiling).toEqual(['agent.create', 'project.read'])
    expect(hopOf(hops, 'c2')!.afterCeiling).toEqual([...POLICY_V1.readonly])
    expect(hopOf(hops, 'c2')!.depth).toBe(1)
  })
})

describe('exclusion reasons', () => {
  const cases: [string, (w: ReturnType<typeof world>) => void][] = [
    ['missing_edge', (w) => w.agent('x')],
    ['duplicate_active_edges', (w) => (w.agent('x'), w.edge('x'), w.edge('x'))],
    ['scope_mismatch', (w) => (w.agent('x'), w.edge('x', {projectId: 'p2'}))],
    ['unsupported_delegator_type', (w) => (w.agent('x', {createdBy: null}), w.edge('x', {delegator: {kind: 'broker', id: 'b1'}}))],
    ['no_principal_root', (w) => (w.agent('x', {createdBy: null}), w.edge('x', {delegator: {kind: 'user', id: 'system/migration'}}))],
    ['root_missing', (w) => (w.agent('x', {createdBy: {kind: 'user', id: 'gone'}}), w.edge('x'))],
    ['root_inactive', (w) => (w.agent('x', {createdBy: {kind: 'user', id: 'u2'}}), w.edge('x'))],
    ['parent_missing', (w) => child(w, 'x', 'nobody')],
    ['parent_deleted', (w) => (w.agent('p', {deleted: true}), w.edge('p'), child(w, 'x', 'p'))],
    ['ancestor_excluded', (w) => (w.agent('p', {role: 'none', appliedRole: 'none'}), w.edge('p'), child(w, 'x', 'p'))],
    ['delegator_ancestry_mismatch', (w) => (w.agent('x', {createdBy: {kind: 'user', id: 'u9'}}), w.edge('x', {delegator: {kind: 'user', id: 'u1'}}))],
    ['unknown_provenance_version', (w) => (w.agent('x'), w.edge('x', {provenanceVersion: 7}))],
    ['malformed_provenance', (w) => (w.agent('x'), w.edge('x', {ceiling: '[]'}))],
    ['malformed_ceiling', (w) => (w.agent('x'), w.edge('x', {provenanceVersion: 1, sourceCredentialKind: 'session', ceiling: '["no.such"]'}))],
    ['role_none', (w) => (w.agent('x', {role: 'none', appliedRole: 'none'}), w.edge('x'))],
    ['unknown_role', (w) => (w.agent('x', {role: 'superuser', appliedRole: 'superuser'}), w.edge('x'))],
    ['unreadable_agent_config', (w) => (w.agent('x', {configReadable: false, appliedRole: null}), w.edge('x'))],
  ]
  it.each(cases)('%s', (reason, build) => {
    const w = world()
    build(w)
    expect(verdict(w, 'x')).toEqual(['excluded', reason])
  })

  it('cycle: every member of a loop, and ancestor_excluded below it', () => {
    const w = world()
    child(w, 'x', 'y')
    child(w, 'y', 'x')
    child(w, 'z', 'x')
    const hops = planAdoption(w)
    expect([hopOf(hops, 'x')!.reason, hopOf(hops, 'y')!.reason, hopOf(hops, 'z')!.reason]).toEqual(['cycle', 'cycle', 'ancestor_excluded'])
  })

  it('too_deep: the hop at MAX_WALK_DEPTH is excluded, the one above it is not', () => {
    const w = world()
    w.agent('a0')
    w.edge('a0')
    for (let i = 1; i <= MAX_WALK_DEPTH + 1; i++) child(w, `a${i}`, `a${i - 1}`)
    const hops = planAdoption(w)
    expect(hopOf(hops, `a${MAX_WALK_DEPTH - 1}`)!.outcome).toBe('adopt')
    expect(hopOf(hops, `a${MAX_WALK_DEPTH}`)!.reason).toBe('too_deep')
    expect(hopOf(hops, `a${MAX_WALK_DEPTH + 1}`)!.reason).toBe('ancestor_excluded')
  })

  it('an applied role of none or an unknown one excludes as the edge role does', () => {
    const w = world()
    w.agent('x', {appliedRole: 'none'})
    w.edge('x')
    w.agent('y', {appliedRole: 'root'})
    w.edge('y')
    expect([verdict(w, 'x'), verdict(w, 'y')]).toEqual([
      ['excluded', 'role_none'],
      ['excluded', 'unknown_role'],
    ])
  })
})

describe('first failing rule wins', () => {
  it.each([
    ['missing edge before everything', (w: ReturnType<typeof world>) => w.agent('x', {role: 'none', configReadable: false}), 'missing_edge'],
    ['duplicates before scope', (w: ReturnType<typeof world>) => (w.agent('x'), w.edge('x'), w.edge('x'), w.edge('x', {projectId: 'p2'})), 'duplicate_active_edges'],
    ['sentinel before root checks and ancestry', (w: ReturnType<typeof world>) => (w.agent('x'), w.edge('x', {delegator: {kind: 'user', id: 'system/migration'}})), 'no_principal_root'],
    ['root_inactive before role_none', (w: ReturnType<typeof world>) => (w.agent('x', {createdBy: {kind: 'user', id: 'u2'}, role: 'none', appliedRole: 'none'}), w.edge('x')), 'root_inactive'],
    ['parent in another project before parent_deleted', (w: ReturnType<typeof world>) => (w.agent('p', {projectId: 'p2', deleted: true}), child(w, 'x', 'p')), 'scope_mismatch'],
    ['ancestor_excluded before malformed provenance', (w: ReturnType<typeof world>) => (w.agent('p', {createdBy: {kind: 'user', id: 'u2'}}), w.edge('p'), child(w, 'x', 'p'), w.activeEdges.set('x', [{...w.activeEdges.get('x')![0], ceiling: '[]'}])), 'ancestor_excluded'],
    ['ancestry mismatch before unknown version', (w: ReturnType<typeof world>) => (w.agent('x', {createdBy: {kind: 'user', id: 'u9'}}), w.edge('x', {delegator: {kind: 'user', id: 'u1'}, provenanceVersion: 9})), 'delegator_ancestry_mismatch'],
    ['malformed provenance before role_none', (w: ReturnType<typeof world>) => (w.agent('x', {role: 'none'}), w.edge('x', {sourceCredentialKind: 'session'})), 'malformed_provenance'],
    ['role_none before unknown_role and unreadable config', (w: ReturnType<typeof world>) => (w.agent('x', {role: 'none', appliedRole: null, configReadable: false}), w.edge('x')), 'role_none'],
    ['an applied role of none before an unknown edge role', (w: ReturnType<typeof world>) => (w.agent('x', {role: 'owner', appliedRole: 'none'}), w.edge('x')), 'role_none'],
    ['unknown edge role before unreadable config', (w: ReturnType<typeof world>) => (w.agent('x', {role: 'owner', appliedRole: null, configReadable: false}), w.edge('x')), 'unknown_role'],
  ])('%s', (_name, build, reason) => {
    const w = world()
    build(w)
    expect(verdict(w, 'x')).toEqual(['excluded', reason])
  })
})

describe('closure, scope and order', () => {
  it('plans stopped agents, skips deleted ones, pulls in ancestors outside the requested agents, and sorts top-down', () => {
    const w = world()
    w.agent('root')
    w.edge('root')
    child(w, 'mid', 'root')
    child(w, 'leaf', 'mid')
    w.agent('gone', {deleted: true})
    w.edge('gone')
    w.agent('other', {projectId: 'p2'})
    w.edge('other')
    expect(planAdoption(w, {agentIds: ['leaf']}).map((h) => [h.agentId, h.depth])).toEqual([
      ['root', 0],
      ['mid', 1],
      ['leaf', 2],
    ])
    expect(planAdoption(w).map((h) => h.agentId)).toEqual(['other', 'root', 'mid', 'leaf'])
    expect(planAdoption(w, {projectId: 'p2'}).map((h) => h.agentId)).toEqual(['other'])
  })

  it('never reads a timestamp: the same rows with other times plan identically', () => {
    const w1 = world()
    w1.agent('a')
    w1.edge('a', {updatedAt: '2026-01-01 00:00:00'})
    const w2 = world()
    w2.agent('a')
    w2.edge('a', {updatedAt: '1999-12-31T23:59:59.999999+05:00', createdAt: 'not a time'})
    expect(planFingerprint('adopt', planAdoption(w1))).toBe(planFingerprint('adopt', planAdoption(w2)))
    expect(planAdoption(w1)).toEqual(planAdoption(w2))
  })

  it('the plan fingerprint changes with the operation and with any hop field', () => {
    const w = world()
    w.agent('a')
    w.edge('a')
    const hops = planAdoption(w)
    const fp = planFingerprint('adopt', hops)
    expect(planFingerprint('revert', hops)).not.toBe(fp)
    expect(planFingerprint('adopt', [{...hops[0], afterCeiling: ['project.read']}])).not.toBe(fp)
  })
})
