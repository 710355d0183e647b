import type {PassTx} from '../../store/pass-transaction.js'
import type {AdoptionRecord} from '../../store/repositories/delegation-adoptions.js'
import type {EdgeFacts, EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {adoptHop, edgeSummary} from './adopt-hop.js'
import type {KeptHops} from './kept-hops.js'
import {planAdoption, type AgentFacts, type PlanCache, type PlannedHop, type World} from './planner.js'
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

/** The agent's one active edge in its own project, or null (none, or several). */
const inProjectEdge = (world: World, id: string) => {
  const facts = world.agents.get(id)
  const edges = (world.activeEdges.get(id) ?? []).filter((e) => e.projectId === facts?.projectId)
  return edges.length === 1 ? edges[0] : null
}

/**
 * Re-reads, inside the hop's transaction, what decides the hop beyond its own row: the agent's
 * and its agent delegators' active edges (one query) and the planner facts of the agent and its
 * parent (one more). Everything else in `world` was loaded once for the pass and is kept current
 * by the pass's own writes, so a hop costs two reads, not a `loadWorld`. Answers the agent's
 * active edges as read, so the write reuses the original row instead of reading it again.
 */
export async function refreshHop(tx: PassTx, world: World, agentId: string): Promise<EdgeRecord[]> {
  const byAgent = new Map<string, EdgeRecord[]>()
  for (const e of await tx.delegationEdges.activeWithDelegators(agentId)) {
    const list = byAgent.get(e.delegateAgentId)
    if (list) list.push(e)
    else byAgent.set(e.delegateAgentId, [e])
  }
  const setEdges = (id: string) => {
    const edges = byAgent.get(id)
    if (edges) world.activeEdges.set(id, edges)
    else world.activeEdges.delete(id)
  }
  const own = byAgent.get(agentId) ?? []
  setEdges(agentId)
  // Every agent the fresh edges name was read: none found means it has no active edge now.
  for (const e of own) if (e.delegator.kind === 'agent') setEdges(e.delegator.id)
  const up = inProjectEdge(world, agentId)?.delegator
  const parentId = up?.kind === 'agent' ? up.id : null
  const ids = parentId ? [agentId, parentId] : [agentId]
  const rows = new Map((await tx.agents.listPlannerAgents(ids)).map((a) => [a.id, a]))
  for (const id of ids) {
    const a = rows.get(id)
    if (!a) world.agents.delete(id)
    else world.agents.set(id, a)
  }
  return own
}

/** The record changed under the pass (an admin commit took it over): the hop's write is rolled back. */
export class RecordMovedOn extends Error {}

export type HopResult = {adopted: true; edge: EdgeRecord} | {adopted: false; reason: SkipReason}

export interface HopWriteOptions {
  now: string
  /**
   * `world` is the database's state as this transaction reads it (nothing was committed
   * elsewhere since it was loaded, and the pass put its own writes in): the hop is planned on
   * it without re-reading its chain.
   */
  worldCurrent?: boolean
  /** Ceilings kept over the pass's hops (planner.ts newPlanCache). */
  planCache?: PlanCache
  /**
   * Hops decided over the pass's hops (kept-hops.ts), used while `worldCurrent`; the
   * caller drops an adopted agent's (dropKept) and clears them once the world is re-read.
   */
  kept?: KeptHops<PlannedHop>
  /** Runs inside the hop's transaction just before its write; a throw fails the write (tests). */
  beforeHopWrite?: (record: AdoptionRecord) => void | Promise<void>
}

/**
 * One hop of a start-up pass, in the caller's transaction: re-plan the record's chain against
 * current state (re-read unless `worldCurrent`), then either adopt it (`adoptHop`, the record
 * `adopted` with the adopted edge, the system actor and the adopted row's summary) or mark it
 * `skipped_changed` with the current reason. No audit record per hop: the record says what the
 * hop did (actor, both edges, `afterSummary`; its before state is always a clean version-0
 * row), and the pass writes one `delegation_provenance_adoption_commit` record at its end
 * (startup-adoption.ts). The caller puts an adopted edge into `world` once the transaction has
 * committed.
 */
export async function settleHop(tx: PassTx, world: World, rec: AdoptionRecord, opts: HopWriteOptions): Promise<HopResult> {
  const agentId = rec.delegateAgentId ?? ''
  const own: EdgeFacts[] = opts.worldCurrent ? (world.activeEdges.get(agentId) ?? []) : await refreshHop(tx, world, agentId)
  // The plan of the agent's chain only (the agent and the ancestors the planner follows from it),
  // on the pass's world: a few hops, not the world's 100k.
  const v = verdict(rec, planAdoption(world, {agentIds: [agentId]}, opts.planCache, opts.worldCurrent ? opts.kept : undefined))
  const skip = async (reason: SkipReason): Promise<HopResult> => {
    // Conditional on the status read at the start of the pass: never overwrites a taken-over record.
    if (rec.status !== 'skipped_changed' || rec.reason !== reason) await tx.delegationAdoptions.update(rec.id, {status: 'skipped_changed', reason}, opts.now, rec.status)
    return {adopted: false, reason}
  }
  if ('skip' in v) return skip(v.skip)
  await opts.beforeHopWrite?.(rec)
  const hop = v.adopt
  // The original row is the one the hop was planned on, its fingerprint compared by the verdict.
  const original = own.find((e) => e.id === rec.originalEdgeId) ?? null
  const r = await adoptHop(tx, {edgeId: rec.originalEdgeId ?? '', agentId, projectId: hop.projectId, afterCeiling: hop.afterCeiling ?? [], beforeFingerprint: rec.beforeFingerprint ?? ''}, opts.now, null, original, true)
  if (!r.ok) return skip(r.reason)
  const afterSummary = edgeSummary(r.adopted)
  // `reserved`: the room the snapshot kept for these columns (migration 0031) is taken by them.
  const patch = {status: 'adopted', reason: null, adoptedEdgeId: r.adopted.id, actorKind: STARTUP_ACTOR.kind, actorId: STARTUP_ACTOR.id, afterSummary, reserved: null}
  if (!(await tx.delegationAdoptions.update(rec.id, patch, opts.now, rec.status))) throw new RecordMovedOn(rec.id)
  return {adopted: true, edge: r.adopted}
}
