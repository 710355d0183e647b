import {describe, expect, it} from 'vitest'
import type {AdoptionRecord} from '../../store/repositories/delegation-adoptions.js'
import type {EdgeRecord} from '../../store/repositories/delegation-edges.js'
import type {AgentFacts, PlannedHop, World} from './planner.js'
import {cohortRecord} from './startup-adoption.js'
import {chainWorld, verdict} from './startup-pass.js'

/** The per-hop verdict of the start-up passes (SPEC "Adoption record and hop") and the chain sub-world. */
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

describe('chainWorld', () => {
  const facts = (id: string, projectId = 'p'): AgentFacts => ({id, projectId, createdBy: null, role: 'full', appliedRole: 'full', assignModeServiceAccount: false, configReadable: true, deleted: false})
  const edge = (agent: string, delegator: {kind: string; id: string}, projectId = 'p') => ({id: `e-${agent}`, delegateAgentId: agent, projectId, delegator}) as EdgeRecord

  it('holds the agent, its agent delegators up to the root user, and nothing else', () => {
    const world: World = {
      agents: new Map(['a', 'b', 'c', 'x'].map((id) => [id, facts(id)])),
      activeEdges: new Map([
        ['a', [edge('a', {kind: 'user', id: 'u'})]],
        ['b', [edge('b', {kind: 'agent', id: 'a'})]],
        ['c', [edge('c', {kind: 'agent', id: 'b'})]],
        ['x', [edge('x', {kind: 'user', id: 'v'})]],
      ]),
      users: new Map([
        ['u', {status: 'active'}],
        ['v', {status: 'active'}],
      ]),
    }
    const sub = chainWorld(world, 'c')
    expect([...sub.agents.keys()].sort()).toEqual(['a', 'b', 'c'])
    expect([...sub.activeEdges.keys()].sort()).toEqual(['a', 'b', 'c'])
    expect([...sub.users.keys()]).toEqual(['u'])
  })

  it('stops at a repeat (a cycle) and at a missing agent', () => {
    const world: World = {
      agents: new Map(['a', 'b'].map((id) => [id, facts(id)])),
      activeEdges: new Map([
        ['a', [edge('a', {kind: 'agent', id: 'b'})]],
        ['b', [edge('b', {kind: 'agent', id: 'a'})]],
      ]),
      users: new Map(),
    }
    expect([...chainWorld(world, 'a').agents.keys()].sort()).toEqual(['a', 'b'])
    world.activeEdges.set('b', [edge('b', {kind: 'agent', id: 'gone'})])
    expect([...chainWorld(world, 'a').agents.keys()].sort()).toEqual(['a', 'b'])
  })
})
