import {AppError} from '../../api/app-error.js'
import type {AdoptionCommitDto, AdoptionPreviewDto, AdoptionRecordDto, AdoptionStatusDto} from '../../api/dto.js'
import type {Repos} from '../../store/store.js'
import type {AdoptionRecord} from '../../store/repositories/delegation-adoptions.js'
import type {CallContext} from '../authz/context.js'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import {recheckAdoptionAdmin, requireAdoptionAdmin} from './adoption-access.js'
import {AUDIT_KIND, writeAdoptions, writeReverts} from './adoption-writes.js'
import {loadWorld, planAdoption, planFingerprint, type PlannedHop, type PlanScope} from './planner.js'
import {planRevert} from './revert-plan.js'
import {COHORT_KEY, MARKER_KEY, type CohortHeader, type Hop, type Marker} from './types.js'

/** Hops one admin commit may write (SPEC "Limits"). */
export const MAX_COMMIT_HOPS = 500

export type PlanBody = {operation: 'adopt'; scope?: PlanScope} | {operation: 'revert'; recordIds: string[]; confirmOriginalEdgeIds?: Record<string, string>}
export type CommitBody = PlanBody & {planFingerprint: string; planId?: string}

export interface StatusQuery {
  status?: string
  reason?: string
  projectId?: string
  limit?: number
  offset?: number
}

/** Records as the API shows them (CONTRACT.md "Adoption record"): no depth, no update time. */
const recordView = ({depth: _d, updatedAt: _u, ...r}: AdoptionRecord): AdoptionRecordDto => r

/** Start-up records whose hop is still to be written (an admin commit may adopt them). */
const OPEN = new Set(['pending', 'skipped_changed'])

/**
 * The adoption plan over current state: the planner's hops with the record that tracks each
 * edge (an open start-up record first, else the newest record naming it as original), and the
 * fingerprint a commit must present.
 */
async function adoptPlan(repos: Repos, scope: PlanScope) {
  if (scope.projectId !== undefined) scope = {...scope, projectId: await projectIdOf(repos, scope.projectId)}
  // Every planned edge is active, and an `adopted` record never names an active edge: adoption
  // deactivates the original in the record's own transaction, and only a revert reactivates an
  // original, turning the records of that adoption `reverted` in its transaction. So those
  // records (all of them after a start-up adoption) stay in the database, not read and dropped.
  const [world, records] = await Promise.all([loadWorld(repos), repos.delegationAdoptions.originalEdgeIndex('adopted')])
  const planned = planAdoption(world, scope)
  // Only records naming a planned edge matter, so no map of every record is kept. None read
  // (no snapshot yet, or every record adopted): every hop keeps `recordId` null, and the
  // 100k-entry set of planned edges is not built.
  const plannedEdges = new Set<string>()
  if (records.length > 0) for (const h of planned) if (h.edgeId) plannedEdges.add(h.edgeId)
  type Rec = {id: string; status: string; createdAt: string}
  const open = new Map<string, Rec>()
  const named = new Map<string, Rec>()
  // Rows come in no fixed order: ties are broken by ID so two plans of one state name the same record.
  const later = (a: Rec, b: Rec) => a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)
  for (const r of records) {
    if (!plannedEdges.has(r.originalEdgeId)) continue
    const o = open.get(r.originalEdgeId)
    if (OPEN.has(r.status) && (!o || r.id < o.id)) open.set(r.originalEdgeId, r)
    const n = named.get(r.originalEdgeId)
    if (!n || later(r, n)) named.set(r.originalEdgeId, r)
  }
  const statusOf = new Map<string, string>()
  // Set in place: planned hops compute their fingerprint on demand, which a copy would lose.
  // (`named` holds every edge that has a record; none: every hop's `recordId` stays null.)
  if (named.size > 0)
    for (const h of planned) {
      const r = h.edgeId ? (open.get(h.edgeId) ?? named.get(h.edgeId)) : undefined
      h.recordId = r ? r.id : null
      if (r) statusOf.set(r.id, r.status)
    }
  // A planned hop's own fields are the API's hop (PlannedHopOf), so the hops are sent as they are.
  const hops: Hop[] = planned
  // A function: the status view plans only for `notInCohort` and needs no fingerprint (a fifth
  // of a full preview at 100k hops).
  return {planned, hops, open, fingerprint: () => planFingerprint('adopt', hops, (id) => statusOf.get(id))}
}

/**
 * A project named by ID or slug, as elsewhere in the API. A reference that names no project is
 * kept as given: records outlive their projects, so a deleted project's ID still filters them.
 */
async function projectIdOf(repos: Repos, ref: string): Promise<string> {
  if (await repos.projects.get(ref)) return ref
  return (await repos.projects.getBySlug(ref))?.id ?? ref
}

function countOutcomes(hops: Array<{outcome: string}>): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const h of hops) counts[h.outcome] = (counts[h.outcome] ?? 0) + 1
  return counts
}

/**
 * The delegation adoption admin API (SPEC "Delegation adoption admin API"): the status view,
 * previews that write nothing, and commits that recompute the plan in one transaction and
 * write every hop or nothing.
 */
export function createAdoptionService(deps: Deps) {
  const {clock} = deps

  async function preview(ctx: CallContext, body: PlanBody): Promise<AdoptionPreviewDto> {
    requireAdoptionAdmin(ctx)
    const planId = newId()
    if (body.operation === 'adopt') {
      const p = await adoptPlan(deps.store, body.scope ?? {})
      return {planId, planFingerprint: p.fingerprint(), operation: body.operation, hops: p.hops, coveredRecordIds: [] as string[], counts: countOutcomes(p.hops)}
    }
    const p = await planRevert(deps.store, body.recordIds, body.confirmOriginalEdgeIds)
    return {planId, planFingerprint: p.fingerprint, operation: body.operation, hops: p.hops, coveredRecordIds: p.coveredRecordIds, counts: countOutcomes(p.hops)}
  }

  async function commit(ctx: CallContext, body: CommitBody): Promise<AdoptionCommitDto> {
    requireAdoptionAdmin(ctx)
    const actor = {kind: 'user' as const, id: ctx.principal.id}
    const planId = body.planId ?? newId()
    // `deps.store` is read at call time (not destructured) so a test can wrap its transaction.
    return deps.store.transaction(async (tx) => {
      // Commits are serialised across replicas (PostgreSQL advisory lock) before anything is read.
      await tx.locks.delegationAdoption()
      await recheckAdoptionAdmin(tx, ctx)
      const now = iso(clock.now())
      const stale = (current: string) => new AppError('stale_authorization_preview', 'the plan changed since the preview; preview again and review it', {planFingerprint: current})
      let recordIds: string[]
      let hops: number
      let coveredRecords = 0
      if (body.operation === 'adopt') {
        const p = await adoptPlan(tx, body.scope ?? {})
        const fingerprint = p.fingerprint()
        if (fingerprint !== body.planFingerprint) throw stale(fingerprint)
        const writes = p.planned.filter((h) => h.outcome === 'adopt')
        if (writes.length === 0) throw new AppError('empty_plan', 'the plan writes nothing: no hop in scope is adoptable')
        if (writes.length > MAX_COMMIT_HOPS) throw new AppError('plan_too_large', `the plan writes ${writes.length} hops; one commit writes at most ${MAX_COMMIT_HOPS} (narrow the scope by project or agents)`, {hops: writes.length, max: MAX_COMMIT_HOPS})
        recordIds = await writeAdoptions(tx, writes, p.open, actor, planId, now)
        hops = writes.length
      } else {
        const p = await planRevert(tx, body.recordIds, body.confirmOriginalEdgeIds)
        if (p.fingerprint !== body.planFingerprint) throw stale(p.fingerprint)
        const refused = p.hops.filter((h) => h.outcome === 'refused')
        if (refused.length) throw new AppError('unrevertable_record', 'the plan holds records that cannot be reverted; nothing was written', {records: refused.map((h) => ({recordId: h.recordId, reason: h.reason}))})
        if (p.items.length === 0) throw new AppError('empty_plan', 'the plan writes nothing')
        if (p.items.length > MAX_COMMIT_HOPS) throw new AppError('plan_too_large', `the plan writes ${p.items.length} hops; one commit writes at most ${MAX_COMMIT_HOPS}`, {hops: p.items.length, max: MAX_COMMIT_HOPS})
        recordIds = await writeReverts(tx, p.items, actor, planId, now)
        hops = p.items.length
        coveredRecords = p.coveredRecordIds.length
      }
      await tx.audit.insert({
        id: newId(),
        kind: AUDIT_KIND.commit,
        actor,
        projectId: null,
        target: null,
        details: {planId, operation: body.operation, planFingerprint: body.planFingerprint, hops, ...(body.operation === 'revert' && {covered_records: coveredRecords}), recordIds},
        at: now,
      })
      return {planId, hops, coveredRecords, recordIds}
    })
  }

  async function status(ctx: CallContext, q: StatusQuery): Promise<AdoptionStatusDto> {
    requireAdoptionAdmin(ctx)
    const store = deps.store
    const limit = q.limit ?? 100
    const offset = q.offset ?? 0
    const projectId = q.projectId === undefined ? undefined : await projectIdOf(store, q.projectId)
    const filter = {status: q.status, reason: q.reason, projectId}
    const [cohort, marker, byStatus, byReason, page, total, plan] = await Promise.all([
      store.hubSettings.get<CohortHeader>(COHORT_KEY),
      store.hubSettings.get<Marker>(MARKER_KEY),
      store.delegationAdoptions.countsByStatus(),
      store.delegationAdoptions.countsByReason(),
      store.delegationAdoptions.list({...filter, limit, offset}),
      store.delegationAdoptions.count(filter),
      adoptPlan(store, projectId ? {projectId} : {}),
    ])
    return {
      snapshotTaken: cohort !== null,
      marker: marker && {retryVersion: marker.retryVersion, counts: marker.counts, writtenAt: marker.writtenAt},
      cohort: cohort && {takenAt: cohort.takenAt, recordCount: cohort.recordCount},
      counts: {byStatus, byReason},
      records: page.map(recordView),
      total,
      limit,
      offset,
      // Adoptable unrecorded hops on live chains that no record names (edges written after the
      // snapshot, or every hop while no snapshot exists).
      notInCohort: plan.hops.filter((h) => h.outcome === 'adopt' && h.recordId === null),
    }
  }

  return {status, preview, commit}
}

export type AdoptionService = ReturnType<typeof createAdoptionService>
