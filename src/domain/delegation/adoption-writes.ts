import {AppError} from '../../api/app-error.js'
import type {Repos} from '../../store/store.js'
import type {NewAdoption} from '../../store/repositories/delegation-adoptions.js'
import {newId} from '../shared/secrets.js'
import {adoptHop, edgeSummary} from './adopt-hop.js'
import type {PlannedHop} from './planner.js'
import type {RevertItem} from './revert-plan.js'
import {RECORD_ORIGIN} from './types.js'

export interface CommitActor {
  kind: 'user'
  id: string
}

export const AUDIT_KIND = {
  adopt: 'delegation_provenance_adoption',
  revert: 'delegation_provenance_adoption_revert',
  commit: 'delegation_provenance_adoption_commit',
} as const

/** A write that found the state moved after the in-transaction plan: the whole commit is refused. */
const moved = (what: string) => new AppError('stale_authorization_preview', `${what} changed while the commit was written; preview again`)

/**
 * Writes the adoptable hops of a recomputed plan, top-down, in the caller's transaction
 * ("Commit effects" 1 and 3): each through `adoptHop` with the admin as initiator, each with a
 * record of origin `admin_commit` and a mutation audit record carrying before and after
 * summaries. A start-up record still `pending` or `skipped_changed` for the same original edge
 * becomes that record (so one edge never has two open records); otherwise a new record is
 * inserted. Returns the record IDs in hop order.
 */
export async function writeAdoptions(tx: Repos, hops: PlannedHop[], open: Map<string, {id: string}>, actor: CommitActor, planId: string, now: string): Promise<string[]> {
  const fresh: NewAdoption[] = []
  const ids: string[] = []
  for (const hop of hops) {
    const r = await adoptHop(tx, {edgeId: hop.edgeId!, agentId: hop.agentId, projectId: hop.projectId, afterCeiling: hop.afterCeiling!, beforeFingerprint: hop.beforeFingerprint!}, now, actor)
    if (!r.ok) throw moved(`the edge of agent ${hop.agentId}`)
    const afterSummary = edgeSummary(r.adopted)
    const existing = open.get(hop.edgeId!)
    const recordId = existing?.id ?? newId()
    const written = {status: 'adopted', reason: null, origin: RECORD_ORIGIN.admin, adoptedEdgeId: r.adopted.id, actorKind: actor.kind, actorId: actor.id, afterSummary}
    if (existing) await tx.delegationAdoptions.update(existing.id, written, now)
    else {
      fresh.push({
        ...written,
        id: recordId,
        originalEdgeId: r.original.id,
        beforeFingerprint: hop.beforeFingerprint,
        projectId: hop.projectId,
        delegateAgentId: hop.agentId,
        depth: hop.depth,
        revertedByKind: null,
        revertedById: null,
        revertedAt: null,
        revertSummary: null,
        createdAt: now,
      })
    }
    await tx.audit.insert({
      id: newId(),
      kind: AUDIT_KIND.adopt,
      actor,
      projectId: hop.projectId,
      target: hop.agentId,
      details: {planId, recordId, originalEdgeId: r.original.id, adoptedEdgeId: r.adopted.id, beforeSummary: edgeSummary(r.original), afterSummary},
      at: now,
    })
    ids.push(recordId)
  }
  await tx.delegationAdoptions.insertMany(fresh)
  return ids
}

/**
 * Writes the revert hops of a recomputed plan ("Commit effects" 1 and 4): the adopted edge is
 * deactivated with cause `adoption_reverted` and the original unrecorded row reactivated; every
 * record naming the adopted edge (asked for or covered) becomes `reverted` with the reverting
 * admin and the restored edge's summary, keeping its actor and after summary. Returns the
 * reverted record IDs.
 */
export async function writeReverts(tx: Repos, items: RevertItem[], actor: CommitActor, planId: string, now: string): Promise<string[]> {
  const ids: string[] = []
  for (const {hop, records, adopted, original} of items) {
    if (!adopted || !original) throw moved(`the edges of agent ${hop.agentId}`)
    if (!(await tx.delegationEdges.deactivate(adopted.id, 'adoption_reverted', now))) throw moved(`the adopted edge of agent ${hop.agentId}`)
    if (!(await tx.delegationEdges.reactivate(original.id, now))) throw moved(`the original edge of agent ${hop.agentId}`)
    const revertSummary = edgeSummary({...original, active: true, deactivationCause: null})
    for (const r of records) {
      await tx.delegationAdoptions.update(r.id, {status: 'reverted', revertedByKind: actor.kind, revertedById: actor.id, revertedAt: now, revertSummary}, now)
      ids.push(r.id)
    }
    await tx.audit.insert({
      id: newId(),
      kind: AUDIT_KIND.revert,
      actor,
      projectId: hop.projectId,
      target: hop.agentId,
      details: {planId, recordIds: records.map((r) => r.id), coveredRecordIds: hop.coveredRecordIds, adoptedEdgeId: adopted.id, originalEdgeId: original.id, beforeSummary: edgeSummary(adopted), afterSummary: revertSummary},
      at: now,
    })
  }
  return ids
}
