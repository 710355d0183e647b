import type {Logger} from 'pino'
import type {Repos, Store} from '../../store/store.js'
import type {AdoptionRecord, NewAdoption} from '../../store/repositories/delegation-adoptions.js'
import type {EdgeFacts} from '../../store/repositories/delegation-edges.js'
import type {Clock} from '../shared/clock.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import {classifyEdge} from './edge-class.js'
import {edgeSummary} from './adopt-hop.js'
import {ADOPTED_SOURCE_KIND, CURRENT_PROVENANCE_VERSION, POLICY_V1_NAME} from './policy-v1.js'
import {clearKept, dropKept, newKeptHops} from './kept-hops.js'
import {loadWorld, newPlanCache, planAdoption, type PlannedHop, type World} from './planner.js'
import {AUDIT_KIND} from './adoption-writes.js'
import {RecordMovedOn, STARTUP_ACTOR, settleHop} from './startup-pass.js'
import {ADOPTION_STATUS_ROUTE, COHORT_KEY, MARKER_KEY, RECORD_ORIGIN, RETRY_VERSION, type CohortHeader, type Marker} from './types.js'

export interface StartupAdoptionHooks {
  /** Runs inside the snapshot transaction before planning; a throw fails the snapshot (tests). */
  beforeSnapshot?: () => void | Promise<void>
  /** Runs inside a hop's transaction before its write; a throw fails that write (tests). */
  beforeHopWrite?: (record: AdoptionRecord) => void | Promise<void>
}

export interface StartupAdoptionResult {
  /** A cohort exists after this run (the status route's `snapshotTaken`). */
  snapshotTaken: boolean
  /** This run took the snapshot. */
  tookSnapshot: boolean
  /** Hops adopted by this run, in either pass. */
  adopted: number
  /** Records this run marked (or kept) `skipped_changed`. */
  skipped: number
  /** The record whose hop write failed; the run stopped there. */
  failedRecordId: string | null
  /** The retry pass ran to its end in this run. */
  retried: boolean
  markerWritten: boolean
  /** Hops on live chains whose edge is still unrecorded (null when planning failed). */
  unrecordedLiveHops: number | null
}

/** Retried by the retry pass; any other skip reason is final. */
const RETRIED = new Set(['edge_changed', 'ancestor_not_adopted'])

/** Top-down: by depth, then as the planner orders hops (agent ID, then record ID), so runs are repeatable. */
const topDown = (a: AdoptionRecord, b: AdoptionRecord) => a.depth - b.depth || byText(a.delegateAgentId ?? '', b.delegateAgentId ?? '') || byText(a.id, b.id)
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Bytes a pending record's row grows by when its hop is adopted: the adopted edge's ID, the actor
 * and the after summary (adopt-hop.ts edgeSummary of the adopted row, its ceiling the planned
 * one). The snapshot reserves them (migration 0031) so the hop's update keeps the row's size.
 * An estimate: a row that grows a little more or less still rarely splits its page.
 */
function adoptionGrowth(h: PlannedHop, idLength: number): number {
  const actor = idLength + STARTUP_ACTOR.kind.length + STARTUP_ACTOR.id.length
  const {delegator: d, role, afterCeiling: c} = h
  if (!d || role === null || c === null) return JSON.stringify(summaryOf(h, 'x'.repeat(idLength))).length + actor
  // Per hop only the texts' lengths (plain IDs: nothing escaped); the ceiling's JSON once per plan's shared array.
  let ceiling = ceilingLengths.get(c)
  if (ceiling === undefined) ceilingLengths.set(c, (ceiling = JSON.stringify(c).length))
  return SUMMARY_FRAME + idLength + d.kind.length + d.id.length + h.agentId.length + h.projectId.length + role.length + ceiling + actor
}
/** The after summary adoption will write (adopt-hop.ts edgeSummary), of the adopted row the hop plans. */
const summaryOf = (h: PlannedHop, edgeId: string) =>
  edgeSummary({
    id: edgeId,
    delegator: h.delegator!,
    delegateAgentId: h.agentId,
    projectId: h.projectId,
    role: h.role!,
    provenanceVersion: CURRENT_PROVENANCE_VERSION,
    sourceCredentialKind: ADOPTED_SOURCE_KIND,
    ceiling: h.afterCeiling === null ? null : JSON.stringify(h.afterCeiling),
    ceilingPolicy: POLICY_V1_NAME,
    ceilingProjectId: h.projectId,
    active: true,
  })
/** The summary's JSON without its texts and ceiling (`null`, 4 characters, taken off). */
const SUMMARY_FRAME = JSON.stringify(summaryOf({delegator: {kind: '', id: ''}, agentId: '', projectId: '', role: '', afterCeiling: null} as unknown as PlannedHop, '')).length - 4
const ceilingLengths = new WeakMap<readonly string[], number>()

/** The cohort record of one examined hop: adoptable hops start `pending`, others take their outcome. */
export function cohortRecord(h: PlannedHop, now: string): NewAdoption {
  const id = newId()
  return {
    reserve: h.outcome === 'adopt' ? adoptionGrowth(h, id.length) : undefined,
    id,
    status: h.outcome === 'adopt' ? 'pending' : h.outcome,
    reason: h.outcome === 'excluded' ? h.reason : null,
    origin: RECORD_ORIGIN.startup,
    originalEdgeId: h.edgeId,
    adoptedEdgeId: null,
    beforeFingerprint: h.beforeFingerprint,
    projectId: h.projectId,
    delegateAgentId: h.agentId,
    depth: h.depth,
    actorKind: null,
    actorId: null,
    afterSummary: null,
    revertedByKind: null,
    revertedById: null,
    revertedAt: null,
    revertSummary: null,
    createdAt: now,
  }
}

/**
 * The world a pass plans on, and the database's change mark read before it was loaded (null:
 * none, or a change elsewhere was seen since; each hop then re-reads its chain).
 */
interface PassWorld {
  world: World
  mark: number | null
}

/** The world read at once, the mark first: a commit elsewhere in between moves the mark. */
async function loadPassWorld(repos: Repos): Promise<PassWorld> {
  const mark = await repos.bulkPass.changeMark()
  return {mark, world: await loadWorld(repos)}
}

/**
 * Step 2: the cohort snapshot, in one transaction: one record per hop the planner examines over
 * every live agent, and the cohort header. Re-checks the header inside, so it is taken once.
 * Answers the world it planned on (null when another start took the snapshot), which the pass
 * then reuses: this transaction's own commit leaves the change mark as it is.
 */
async function takeSnapshot(store: Store, now: string, hooks: StartupAdoptionHooks): Promise<PassWorld | null> {
  return store.transaction(async (tx) => {
    if (await tx.hubSettings.get<CohortHeader>(COHORT_KEY)) return null
    await hooks.beforeSnapshot?.()
    const loaded = await loadPassWorld(tx)
    const records = planAdoption(loaded.world).map((h) => cohortRecord(h, now))
    await tx.delegationAdoptions.insertMany(records)
    const header: CohortHeader = {takenAt: now, recordCount: records.length}
    await tx.hubSettings.put(COHORT_KEY, header, now)
    return loaded
  })
}

const cohortRecords = async (store: Store, status: string) => (await store.delegationAdoptions.listOf(status, RECORD_ORIGIN.startup)).sort(topDown)

/**
 * One pass over `records`, top-down, one transaction per hop. The world is loaded once per run
 * and kept current: an adopted edge replaces the original in memory after its commit, so a
 * parent adopted earlier in the pass unblocks its child. While nothing is committed elsewhere
 * (the change mark, SQLite) a hop is planned on that world with no read at all; otherwise (a
 * change seen, or PostgreSQL) each hop re-reads its own and its parent's rows and re-plans only
 * its chain (startup-pass.ts). Stops at the first hop whose write throws and returns false;
 * later records keep their status. Either way, when the pass adopted hops, it ends with one
 * audit record of them (`commitAudit`).
 */
async function pass(store: Store, loaded: PassWorld, records: AdoptionRecord[], name: PassName, clock: Clock, hooks: StartupAdoptionHooks, result: StartupAdoptionResult, logger: Logger): Promise<boolean> {
  const {world} = loaded
  const planCache = newPlanCache()
  const kept = newKeptHops<PlannedHop>()
  let adopted = 0
  try {
    for (const rec of records) {
      try {
        const r = await store.passTransaction(async (tx) => {
          const worldCurrent = loaded.mark !== null && (await tx.bulkPass.changeMark()) === loaded.mark
          // Seen once, a change elsewhere may touch any chain: every later hop re-reads its own.
          if (!worldCurrent) {
            loaded.mark = null
            clearKept(kept)
          }
          return settleHop(tx, world, rec, {now: iso(clock.now()), worldCurrent, planCache, kept, beforeHopWrite: hooks.beforeHopWrite})
        })
        if (r.adopted) {
          world.activeEdges.set(r.edge.delegateAgentId, [r.edge])
          // Its hop and every hop kept below it were decided on the edge it replaced.
          dropKept(kept, r.edge.delegateAgentId)
          result.adopted++
          adopted++
        } else result.skipped++
      } catch (err) {
        // Taken over by an admin commit while this hop was planned: left to it, the pass goes on.
        if (err instanceof RecordMovedOn) continue
        result.failedRecordId = rec.id
        logger.error({err: (err as Error).message, recordId: rec.id, agentId: rec.delegateAgentId}, 'delegation provenance adoption: a hop write failed; the run stops here and resumes at the next start')
        return false
      }
    }
    return true
  } finally {
    if (adopted > 0) await commitAudit(store, name, adopted, clock, logger)
  }
}

type PassName = 'adopt' | 'retry'

/**
 * The one audit record of a pass that adopted hops, in its own transaction after the hops'
 * (docs/delegation.md, "Start-up migration run"): a start-up hop writes no audit record of its
 * own, since SPEC asks per-hop audit records of admin commits only and the hop's adoption record
 * already holds the actor, both edges and the after summary. Its failure is logged: the hops
 * are committed and their records say what was done.
 */
async function commitAudit(store: Store, name: PassName, hops: number, clock: Clock, logger: Logger): Promise<void> {
  try {
    await store.audit.insert({id: newId(), kind: AUDIT_KIND.commit, actor: STARTUP_ACTOR, projectId: null, target: null, details: {origin: RECORD_ORIGIN.startup, hops, pass: name}, at: iso(clock.now())})
  } catch (err) {
    logger.error({err: (err as Error).message, hops, pass: name}, 'delegation provenance adoption: the audit record of the pass failed')
  }
}

/** Counts of the cohort's records by status, for the marker. */
const cohortCounts = (store: Store) => store.delegationAdoptions.countsByStatusOf(RECORD_ORIGIN.startup)

/** Whether a row is unrecorded is decided before its ceiling is read: none is parsed (100k adopted edges after a run). */
const noCeiling = () => null
const unrecorded = (e: EdgeFacts) => classifyEdge(e, noCeiling).kind === 'unrecorded'

/**
 * Hops on live chains whose edge is unrecorded: the agent's own row, or, when it has no single
 * in-project row, any of its active rows. Counted without a plan: the planner examines one hop
 * per live agent (the ancestors it follows are live agents of the same project too), and a hop
 * names the agent's one in-project active row, else no row (startup-pass.test.ts holds it to
 * the count over `planAdoption`'s hops).
 */
export function unrecordedHops(world: World): number {
  let n = 0
  for (const a of world.agents.values()) {
    if (a.deleted) continue
    const edges = world.activeEdges.get(a.id)
    if (!edges) continue
    let own: EdgeFacts | null = null
    let inProject = 0
    for (const e of edges) if (e.projectId === a.projectId && inProject++ === 0) own = e
    if (inProject === 1 ? unrecorded(own!) : edges.some(unrecorded)) n++
  }
  return n
}

/**
 * The start-up provenance adoption (SPEC "Start-up migration run"), after the edge backfill and
 * under the migration lock on PostgreSQL:
 * - first start: the cohort snapshot; a planning or snapshot failure leaves none and the next
 *   start takes it (including edges written in between);
 * - pending records are adopted top-down, one transaction per hop, stopping at the first failed
 *   write (later records stay pending for the next start or an admin commit);
 * - with no pending record left and no marker of the current `RETRY_VERSION`: the retry pass over
 *   `skipped_changed` records whose reason is `edge_changed` or `ancestor_not_adopted`, then the
 *   marker; a failed write in the pass leaves the marker as it was;
 * - at every start: record counts (info) and, when hops on live chains are still unrecorded, a
 *   warning naming how many and the admin status route.
 * Never throws: the Hub always starts.
 */
export async function runStartupAdoption(store: Store, clock: Clock, logger: Logger, hooks: StartupAdoptionHooks = {}): Promise<StartupAdoptionResult> {
  const result: StartupAdoptionResult = {snapshotTaken: false, tookSnapshot: false, adopted: 0, skipped: 0, failedRecordId: null, retried: false, markerWritten: false, unrecordedLiveHops: null}
  let loaded: PassWorld | null = null
  try {
    if (!(await store.hubSettings.get<CohortHeader>(COHORT_KEY))) {
      try {
        loaded = await takeSnapshot(store, iso(clock.now()), hooks)
        // Null: another start (a replica, under the lock) took it first.
        result.tookSnapshot = loaded !== null
      } catch (err) {
        logger.error({err: (err as Error).message}, 'delegation provenance adoption: planning or the cohort snapshot failed; the Hub serves without a snapshot and the next start takes it')
        return result
      }
    }
    result.snapshotTaken = true
    const marker = await store.hubSettings.get<Marker>(MARKER_KEY)
    const pending = await cohortRecords(store, 'pending')
    const retryDue = !marker || marker.retryVersion < RETRY_VERSION
    if (!pending.length && !retryDue) return result
    loaded ??= await loadPassWorld(store)
    const run = loaded
    // Fewer WAL checkpoints while the pass writes (SQLite); each hop still commits on its own
    // (and, on SQLite, made on a second connection in a worker thread: store/pass-checkpointer.ts,
    // stopped by `end` before the WAL is truncated)
    return await store.bulkPass.withFewerCheckpoints(async () => {
      try {
        if (pending.length && !(await pass(store, run, pending, 'adopt', clock, hooks, result, logger))) return result
        if (retryDue) {
          const retry = (await cohortRecords(store, 'skipped_changed')).filter((r) => RETRIED.has(r.reason ?? ''))
          if (!(await pass(store, run, retry, 'retry', clock, hooks, result, logger))) return result
          result.retried = true
          const now = iso(clock.now())
          await store.hubSettings.put(MARKER_KEY, {retryVersion: RETRY_VERSION, counts: await cohortCounts(store), writtenAt: now} satisfies Marker, now)
          result.markerWritten = true
        }
        return result
      } finally {
        await store.passTransaction.end?.()
      }
    })
  } catch (err) {
    logger.error({err: (err as Error).message}, 'delegation provenance adoption failed; it runs again at the next start')
    return result
  } finally {
    await summarise(store, loaded?.world ?? null, result, logger)
  }
}

/** Step 8: record counts, and the warning when hops on live chains remain unrecorded. */
async function summarise(store: Store, world: World | null, result: StartupAdoptionResult, logger: Logger): Promise<void> {
  try {
    const counts = result.snapshotTaken ? await store.delegationAdoptions.countsByStatus() : {}
    logger.info({snapshotTaken: result.snapshotTaken, tookSnapshot: result.tookSnapshot, adopted: result.adopted, skipped: result.skipped, retried: result.retried, counts}, 'delegation provenance adoption: record counts')
    result.unrecordedLiveHops = unrecordedHops(world ?? (await loadWorld(store)))
    if (result.unrecordedLiveHops > 0)
      logger.warn(
        {unrecordedHops: result.unrecordedLiveHops, route: ADOPTION_STATUS_ROUTE},
        `${result.unrecordedLiveHops} delegation hops on live chains still have unrecorded provenance; see ${ADOPTION_STATUS_ROUTE} to review and adopt them`,
      )
  } catch (err) {
    logger.error({err: (err as Error).message}, 'delegation provenance adoption: the start-up summary failed')
  }
}
