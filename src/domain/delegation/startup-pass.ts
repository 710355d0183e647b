import type {Repos} from '../../store/store.js'
import type {AdoptionRecord} from '../../store/repositories/delegation-adoptions.js'
import type {EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {newId} from '../shared/secrets.js'
import {adoptHop, edgeSummary} from './adopt-hop.js'
import {configFacts, planAdoption, type AgentFacts, type PlannedHop, type World} from './planner.js'
import {RECORD_ORIGIN, type ExclusionReason, type SkipReason} from './types.js'

/** Who adopts a hop at start-up: recorded as the record's actor and the audit record's. */
export const STARTUP_ACTOR = {kind: 'system', id: RECORD_ORIGIN.startup} as const

/** Outcomes of a delegator's own hop that let its child be adopted: recorded or adopted. */
const SETTLED = new Set(['recorded', 'recognized', 'recognized_above_policy'])

/** Exclusions caused above the hop (its own row unchanged): reported as `ancestor_not_adopted`. */
const ABOVE: ReadonlySet<ExclusionReason> = new Set<ExclusionReason>(['parent_missing', 'parent_deleted', 'ancestor_excluded', 'cycle', 'too_deep'])

export type HopVerdict = {adopt: PlannedHop} | {skip: SkipReason}

/**
 * Whether a record's hop may be adopted now, from the current plan of its chain: the hop must
 * name the record's original edge (else `edge_changed`), match its before-fingerprint (else
 * `fingerprint_changed`), still be adoptable, and, for an agent delegator, the delegator's own
 * hop must already be recorded or adopted (else `ancestor_not_adopted`): a child is never
 * adopted under a parent whose own hop is still unrecorded, even though the plan would bound it.
 */
export function verdict(rec: AdoptionRecord, hops: PlannedHop[]): HopVerdict {
  const h = hops.find((x) => x.agentId === rec.delegateAgentId)
  if (!h || h.edgeId === null || h.edgeId !== rec.originalEdgeId) return {skip: 'edge_changed'}
  if (h.beforeFingerprint !== rec.beforeFingerprint) return {skip: 'fingerprint_changed'}
  if (h.outcome !== 'adopt') return {skip: h.reason !== null && ABOVE.has(h.reason as ExclusionReason) ? 'ancestor_not_adopted' : 'edge_changed'}
  if (h.delegator?.kind === 'agent') {
    const parent = hops.find((x) => x.agentId === h.delegator?.id)
    if (!parent || !SETTLED.has(parent.outcome)) return {skip: 'ancestor_not_adopted'}
  }
  return {adopt: h}
}

/**
 * The planner's world restricted to one agent's chain, read from the database inside the hop's
 * transaction: the agent and each agent delegator above it (followed as the planner follows
 * them, until a user, a missing agent or a repeat), their active edges, and the root user. A
 * hop costs its chain's length in queries instead of a whole `loadWorld`, and sees every change
 * made to its chain since the pass began.
 */
/** One agent's planner facts, read as `loadWorld` reads them (raw config, deleted rows too). */
async function agentFacts(tx: Repos, id: string): Promise<AgentFacts | null> {
  const [r] = await tx.agents.listPlannerFacts([id])
  if (!r) return null
  return {id, projectId: r.projectId, createdBy: r.createdById ? {kind: r.createdByKind, id: r.createdById} : null, role: r.role, deleted: r.deleted, ...configFacts(r.config, r.role)}
}

export async function chainWorld(tx: Repos, agentId: string): Promise<World> {
  const world: World = {agents: new Map(), activeEdges: new Map(), users: new Map()}
  let id: string | null = agentId
  while (id !== null && !world.agents.has(id)) {
    const facts = await agentFacts(tx, id)
    if (!facts) break
    world.agents.set(id, facts)
    const edges = await tx.delegationEdges.activeFor(id)
    if (edges.length) world.activeEdges.set(id, edges)
    const inProject = edges.filter((e) => e.projectId === facts.projectId)
    const up = inProject.length === 1 ? inProject[0].delegator : null
    if (up?.kind === 'user' && !world.users.has(up.id)) {
      const user = await tx.users.get(up.id)
      if (user) world.users.set(up.id, {status: user.status})
    }
    id = up?.kind === 'agent' ? up.id : null
  }
  return world
}

export type HopResult = {adopted: true; edge: EdgeRecord} | {adopted: false; reason: SkipReason}

export interface HopWriteOptions {
  now: string
  /** Runs inside the hop's transaction just before its write; a throw fails the write (tests). */
  beforeHopWrite?: (record: AdoptionRecord) => void | Promise<void>
}

/**
 * One hop of a start-up pass, in the caller's transaction: re-plan the record's chain against
 * current state, then either adopt it (`adoptHop`, the record `adopted` with the adopted edge,
 * the system actor and the adopted row's summary, and a `delegation_provenance_adoption` audit
 * record) or mark it `skipped_changed` with the current reason.
 */
export async function settleHop(tx: Repos, rec: AdoptionRecord, opts: HopWriteOptions): Promise<HopResult> {
  const agentId = rec.delegateAgentId ?? ''
  const v = verdict(rec, planAdoption(await chainWorld(tx, agentId)))
  const skip = async (reason: SkipReason): Promise<HopResult> => {
    if (rec.status !== 'skipped_changed' || rec.reason !== reason) await tx.delegationAdoptions.update(rec.id, {status: 'skipped_changed', reason}, opts.now)
    return {adopted: false, reason}
  }
  if ('skip' in v) return skip(v.skip)
  await opts.beforeHopWrite?.(rec)
  const hop = v.adopt
  const r = await adoptHop(tx, {edgeId: rec.originalEdgeId ?? '', agentId, projectId: hop.projectId, afterCeiling: hop.afterCeiling ?? [], beforeFingerprint: rec.beforeFingerprint ?? ''}, opts.now, null)
  if (!r.ok) return skip(r.reason)
  const afterSummary = edgeSummary(r.adopted)
  await tx.delegationAdoptions.update(rec.id, {status: 'adopted', reason: null, adoptedEdgeId: r.adopted.id, actorKind: STARTUP_ACTOR.kind, actorId: STARTUP_ACTOR.id, afterSummary}, opts.now)
  await tx.audit.insert({
    id: newId(),
    kind: 'delegation_provenance_adoption',
    actor: STARTUP_ACTOR,
    projectId: r.adopted.projectId,
    target: r.adopted.delegateAgentId,
    details: {recordId: rec.id, origin: rec.origin, before: edgeSummary(r.original), after: afterSummary},
    at: opts.now,
  })
  return {adopted: true, edge: r.adopted}
}
