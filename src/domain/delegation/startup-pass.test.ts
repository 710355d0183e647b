import {describe, expect, it} from 'vitest'
import type {AdoptionRecord} from '../../store/repositories/delegation-adoptions.js'
import type {EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {newPlanCache, planAdoption, type AgentFacts, type PlannedHop, type World} from './planner.js'
import {dropKept, newKeptHops} from './kept-hops.js'
import {classifyEdge} from './edge-class.js'
import {cohortRecord, unrecordedHops} from './startup-adoption.js'
import {STARTUP_ACTOR, verdict} from './startup-pass.js'
import {edgeSummary} from './adopt-hop.js'
import {ADOPTED_SOURCE_KIND, CURRENT_PROVENANCE_VERSION, POLICY_V1_NAME} from './policy-v1.js'
import {newId} from '../shared/secrets.js'

/** The per-hop verdict of the start-up passes (SPEC "Adoption record and hop") and the chain plan it is given. */
const hop = (agentId: string, over: Partial<PlannedHop> = {}): PlannedHop => ({
  edgeId: `e-${agentId}`,
  agentId,
  projectId: 'p',
  outcome: 'adopt',
  reason: null,
  delegator: {kind: 'user', id: 'u'},
  role: 'full',
  beforeCeiling: null,
  afterCeiling: ['project.read'],
  recordId: null,
  depth: 0,
  beforeFingerprint: `f-${agentId}`,
  ...over,
})

const T = '2026-01-01T00:00:00.000Z'
/** The cohort record the snapshot writes for an adoptable hop. */
const record = (agentId: string): AdoptionRecord => ({...cohortRecord(hop(agentId), T), updatedAt: T})

describe('verdict', () => {
  it('adopts a hop that still names its edge, matches its fingerprint and is adoptable', () => {
    expect(record('a')).toMatchObject({status: 'pending', reason: null, origin: 'startup_migration', originalEdgeId: 'e-a', beforeFingerprint: 'f-a', delegateAgentId: 'a', depth: 0})
    expect(verdict(record('a'), [hop('a')])).toEqual({adopt: hop('a')})
  })

  it('edge_changed when the hop is gone or names another edge; fingerprint_changed when the row changed', () => {
    expect(verdict(record('a'), [])).toEqual({skip: 'edge_changed'})
    expect(verdict(record('a'), [hop('a', {edgeId: 'e-new'})])).toEqual({skip: 'edge_changed'})
    expect(verdict(record('a'), [hop('a', {edgeId: null, outcome: 'excluded', reason: 'duplicate_active_edges'})])).toEqual({skip: 'edge_changed'})
    expect(verdict(record('a'), [hop('a', {beforeFingerprint: 'f-other'})])).toEqual({skip: 'fingerprint_changed'})
  })

  it('a child waits for its agent delegator to be recorded or adopted, though the plan would bound it', () => {
    const child = hop('c', {delegator: {kind: 'agent', id: 'a'}, depth: 1})
    expect(verdict(record('c'), [hop('a'), child])).toEqual({skip: 'ancestor_not_adopted'})
    for (const outcome of ['recorded', 'recognized', 'recognized_above_policy'] as const) expect(verdict(record('c'), [hop('a', {outcome}), child])).toEqual({adopt: child})
  })

  it('an exclusion from above the hop is ancestor_not_adopted; any other is edge_changed', () => {
    for (const reason of ['parent_missing', 'parent_deleted', 'ancestor_excluded', 'cycle', 'too_deep'] as const)
      expect(verdict(record('a'), [hop('a', {outcome: 'excluded', reason})])).toEqual({skip: 'ancestor_not_adopted'})
    for (const reason of ['root_inactive', 'role_none', 'unreadable_agent_config'] as const) expect(verdict(record('a'), [hop('a', {outcome: 'excluded', reason})])).toEqual({skip: 'edge_changed'})
  })
})

describe('the chain plan a hop is settled on', () => {
  const facts = (id: string, projectId = 'p', deleted = false): AgentFacts => ({id, projectId, createdBy: null, role: 'full', appliedRole: 'full', assignModeServiceAccount: false, configReadable: true, deleted})
  const edge = (agent: string, delegator: {kind: string; id: string}, projectId = 'p') =>
    ({id: `e-${agent}`, delegateAgentId: agent, projectId, delegator, role: 'full', provenanceVersion: 0, sourceCredentialKind: null, ceiling: null, ceilingPolicy: null, ceilingProjectId: null, active: true}) as EdgeRecord
  const view = (h: PlannedHop) => [h.agentId, h.edgeId, h.outcome, h.reason, h.depth, h.afterCeiling, h.beforeCeiling]

  /** A generated world: chains, loops, deleted and foreign parents, missing parents, suspended and missing root users. */
  function generated(seed: number, n: number): World {
    let x = seed
    const rnd = (k: number) => ((x = (x * 1103515245 + 12345) % 2147483648), Math.floor(x / 65536) % k)
    const world: World = {agents: new Map(), activeEdges: new Map(), users: new Map([['u', {status: 'active'}], ['s', {status: 'suspended'}]])}
    for (let i = 0; i < n; i++) {
      const id = `a${String(i).padStart(3, '0')}`
      const project = rnd(10) === 0 ? 'q' : 'p'
      world.agents.set(id, facts(id, project, rnd(12) === 0))
      const r = rnd(10)
      const delegator = r < 3 ? {kind: 'user', id: ['u', 'u', 's', 'gone'][rnd(4)]} : r === 3 ? {kind: 'agent', id: 'missing'} : {kind: 'agent', id: `a${String(rnd(n)).padStart(3, '0')}`}
      const edges = [rnd(4) === 0 ? {...edge(id, delegator, project), provenanceVersion: 1, sourceCredentialKind: 'session', ceiling: '[]'} : edge(id, delegator, project)]
      if (rnd(25) === 0) edges.push({...edge(id, {kind: 'user', id: 'u'}, project), id: `e2-${id}`})
      if (rnd(25) !== 0) world.activeEdges.set(id, edges)
    }
    return world
  }

  it('decides every hop of the agent chain as the plan of the whole world does', () => {
    const outcomes = new Set<string>()
    for (const seed of [1, 2, 3, 4, 5]) {
      const world = generated(seed, 300)
      const whole = new Map(planAdoption(world).map((h) => [h.agentId, h]))
      let compared = 0
      for (const a of world.agents.values()) {
        if (a.deleted) continue
        const chain = planAdoption(world, {agentIds: [a.id]})
        expect(chain.some((h) => h.agentId === a.id)).toBe(true)
        for (const h of chain) expect(view(h), `seed ${seed}, ${a.id}: ${h.agentId}`).toEqual(view(whole.get(h.agentId)!))
        compared += chain.length
      }
      for (const h of whole.values()) outcomes.add(h.reason ?? h.outcome)
      expect(compared).toBeGreaterThan(300)
    }
    // The worlds hold every kind of hop the verdict reads (so none goes unchecked).
    for (const o of ['adopt', 'cycle', 'parent_deleted', 'parent_missing', 'scope_mismatch', 'root_inactive', 'root_missing', 'ancestor_excluded', 'missing_edge', 'duplicate_active_edges']) expect(outcomes).toContain(o)
  })

  it('with kept hops, decides each chain of a pass as a fresh plan does, while adoptions change the world', () => {
    // A pass on its world: each adoptable hop in turn (plan order, then children before parents),
    // planned with the pass's kept hops and fresh; an adopted hop's edge replaced as the pass does.
    let adoptedInAll = 0
    for (const seed of [1, 2, 3, 4, 5])
      for (const reversed of [false, true]) {
        const world = generated(seed, 300)
        const order = planAdoption(world).filter((h) => h.outcome === 'adopt')
        if (reversed) order.reverse()
        const kept = newKeptHops<PlannedHop>()
        const cache = newPlanCache()
        for (const h of order) {
          const withKept = planAdoption(world, {agentIds: [h.agentId]}, cache, kept)
          const fresh = planAdoption(world, {agentIds: [h.agentId]})
          // It stops at a kept hop: the agent and its parent (what the verdict reads) are there, each as decided fresh.
          const byAgent = new Map(fresh.map((x) => [x.agentId, x]))
          const own = withKept.find((x) => x.agentId === h.agentId)!
          expect(own).toBeDefined()
          if (own.delegator?.kind === 'agent' && byAgent.has(own.delegator.id)) expect(withKept.some((x) => x.agentId === own.delegator!.id)).toBe(true)
          for (const x of withKept) expect(view(x), `seed ${seed}, ${h.agentId}: ${x.agentId}`).toEqual(view(byAgent.get(x.agentId)!))
          expect(verdict({...record(h.agentId), originalEdgeId: h.edgeId, beforeFingerprint: h.beforeFingerprint}, withKept)).toEqual(verdict({...record(h.agentId), originalEdgeId: h.edgeId, beforeFingerprint: h.beforeFingerprint}, fresh))
          const v = verdict({...record(h.agentId), originalEdgeId: h.edgeId, beforeFingerprint: h.beforeFingerprint}, withKept)
          if (!('adopt' in v)) continue
          const e = world.activeEdges.get(h.agentId)!.find((x) => x.id === h.edgeId)!
          const ceiling = JSON.stringify([...v.adopt.afterCeiling!].sort())
          world.activeEdges.set(h.agentId, [{...e, id: `${e.id}-adopted`, provenanceVersion: CURRENT_PROVENANCE_VERSION, sourceCredentialKind: ADOPTED_SOURCE_KIND, ceiling, ceilingPolicy: POLICY_V1_NAME, ceilingProjectId: e.projectId}])
          dropKept(kept, h.agentId)
          adoptedInAll++
        }
      }
    expect(adoptedInAll).toBeGreaterThan(100)
  })

  it('dropKept drops a hop and every hop kept below it', () => {
    const kept = newKeptHops<string>()
    for (const id of ['a', 'b', 'c', 'x']) kept.hops.set(id, id)
    kept.children.set('a', ['b'])
    kept.children.set('b', ['c'])
    dropKept(kept, 'a')
    expect([...kept.hops.keys()]).toEqual(['x'])
  })

  it('unrecordedHops counts, without a plan, the hops of the whole plan whose row is unrecorded', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const world = generated(seed, 300)
      const byPlan = planAdoption(world).filter((h) => (world.activeEdges.get(h.agentId) ?? []).some((e) => (h.edgeId === null || e.id === h.edgeId) && classifyEdge(e).kind === 'unrecorded')).length
      expect(byPlan).toBeGreaterThan(0)
      expect(unrecordedHops(world), `seed ${seed}`).toBe(byPlan)
    }
  })

  it('holds only the agent and the ancestors the planner follows from it', () => {
    const world: World = {
      agents: new Map(['a', 'b', 'c', 'x'].map((id) => [id, facts(id)])),
      activeEdges: new Map([
        ['a', [edge('a', {kind: 'user', id: 'u'})]],
        ['b', [edge('b', {kind: 'agent', id: 'a'})]],
        ['c', [edge('c', {kind: 'agent', id: 'b'})]],
        ['x', [edge('x', {kind: 'user', id: 'u'})]],
      ]),
      users: new Map([['u', {status: 'active'}]]),
    }
    expect(planAdoption(world, {agentIds: ['c']}).map((h) => h.agentId)).toEqual(['a', 'b', 'c'])
    world.activeEdges.set('a', [edge('a', {kind: 'agent', id: 'c'})])
    expect(planAdoption(world, {agentIds: ['c']}).map((h) => [h.agentId, h.reason])).toEqual([
      ['a', 'cycle'],
      ['b', 'cycle'],
      ['c', 'cycle'],
    ])
  })
})

describe('the room a cohort record keeps for its adoption (migration 0031)', () => {
  it('is what the adoption adds to the row: the adopted edge ID, the actor and the after summary', () => {
    const h = hop('a', {afterCeiling: ['project.read', 'agent.create'], delegator: {kind: 'agent', id: 'parent-agent'}})
    const rec = cohortRecord(h, T)
    const adoptedId = newId()
    const adopted = {...edgeOf('a', h), id: adoptedId, provenanceVersion: CURRENT_PROVENANCE_VERSION, sourceCredentialKind: ADOPTED_SOURCE_KIND, ceiling: JSON.stringify([...h.afterCeiling!].sort())}
    expect(rec.reserve).toBe(JSON.stringify(edgeSummary(adopted)).length + adoptedId.length + STARTUP_ACTOR.kind.length + STARTUP_ACTOR.id.length)
  })

  it('is kept only by records whose hop is adopted later (pending)', () => {
    expect(cohortRecord(hop('a', {outcome: 'recognized'}), T).reserve).toBeUndefined()
    expect(cohortRecord(hop('a', {outcome: 'excluded', reason: 'role_none'}), T).reserve).toBeUndefined()
  })
})

/** The active edge a planned hop names, as the store reads it. */
function edgeOf(agentId: string, h: PlannedHop): EdgeRecord {
  return {id: h.edgeId!, delegateAgentId: agentId, projectId: h.projectId, delegator: h.delegator!, role: h.role!, provenanceVersion: 0, sourceCredentialKind: null, ceiling: null, ceilingPolicy: null, ceilingProjectId: null, active: true} as EdgeRecord
}
