import {createHash} from 'node:crypto'
import {AppError} from '../../api/app-error.js'
import type {Repos} from '../../store/store.js'
import type {AdoptionRecord} from '../../store/repositories/delegation-adoptions.js'
import type {EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {classifyEdge, edgeFingerprint, parseCeiling} from './edge-class.js'

/** Why a revert hop cannot be written (the hop's `reason` when its outcome is `refused`). */
export const REVERT_REFUSALS = ['not_adopted', 'adopted_edge_inactive', 'edge_changed', 'original_unavailable', 'original_ambiguous', 'covered_original_differs'] as const
export type RevertRefusal = (typeof REVERT_REFUSALS)[number]

/**
 * One hop of a revert plan: one adopted edge, reverted once for every record that names it.
 * `edgeId` is the adopted edge the revert deactivates, `originalEdgeId` the unrecorded row it
 * reactivates; `beforeCeiling` is the adopted ceiling, `afterCeiling` null (unrecorded again).
 */
export interface RevertHop {
  edgeId: string | null
  agentId: string
  projectId: string
  outcome: 'revert' | 'refused'
  reason: RevertRefusal | null
  delegator: {kind: string; id: string} | null
  role: string | null
  beforeCeiling: string[] | null
  afterCeiling: null
  recordId: string
  originalEdgeId: string | null
  /** Records naming the same adopted edge that were not asked for: reverted with it. */
  coveredRecordIds: string[]
}

/** A planned revert with what the commit writes: the records to mark and both edges. */
export interface RevertItem {
  hop: RevertHop
  records: AdoptionRecord[]
  adopted: EdgeRecord | null
  original: EdgeRecord | null
}

export interface RevertPlan {
  items: RevertItem[]
  hops: RevertHop[]
  coveredRecordIds: string[]
  fingerprint: string
}

/**
 * Plans a revert over current state (SPEC "Adoption record and hop": adopted -> reverted).
 * Requested records are grouped by the adopted edge they point at: an `adopted` record names it
 * as `adoptedEdgeId`, a `recognized` cohort record (an adoption the snapshot found already made)
 * names it as its examined edge. An edge is reverted once, and every record pointing at it
 * (`adopted` or recognized) is reverted with it: the records of an admin commit made while no
 * snapshot existed and the cohort record the next start's snapshot wrote for the same edge are
 * one revert. A hop is refused when a requested record is neither, its adopted edge is no longer
 * the agent's one active edge, the original row is gone or no longer a clean inactive
 * unrecorded row of the same agent, or the group's records name different originals and
 * `confirmOriginalEdgeIds` does not pick one of them (`covered_original_differs`). Unknown
 * record IDs refuse the whole plan (422).
 */
export async function planRevert(repos: Repos, recordIds: string[], confirm: Record<string, string> = {}): Promise<RevertPlan> {
  const ids = [...new Set(recordIds)]
  const found = await repos.delegationAdoptions.getMany(ids)
  const unknown = ids.filter((id) => !found.some((r) => r.id === id))
  if (unknown.length) throw new AppError('unrevertable_record', 'no adoption record has this ID', {recordIds: unknown.sort(), reason: 'record_not_found'})

  const groups = new Map<string, AdoptionRecord[]>()
  for (const r of found) {
    const edge = pointsAt(r)
    const key = edge ? `edge:${edge}` : `record:${r.id}`
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  const items: RevertItem[] = []
  for (const requested of groups.values()) items.push(await planGroup(repos, requested, confirm))
  items.sort((a, b) => (a.hop.agentId < b.hop.agentId ? -1 : a.hop.agentId > b.hop.agentId ? 1 : a.hop.recordId < b.hop.recordId ? -1 : 1))
  const hops = items.map((i) => i.hop)
  const coveredRecordIds = hops.filter((h) => h.outcome === 'revert').flatMap((h) => h.coveredRecordIds).sort()
  return {items, hops, coveredRecordIds, fingerprint: revertFingerprint(items)}
}

/** Cohort records of edges found already adopted: the record names the adopted edge itself. */
const RECOGNIZED = new Set(['recognized', 'recognized_above_policy'])

/** The adopted edge a record points at: its `adoptedEdgeId`, or a recognized record's examined edge. */
const pointsAt = (r: AdoptionRecord): string | null => (RECOGNIZED.has(r.status) ? r.originalEdgeId : r.adoptedEdgeId)

/**
 * One adopted edge and every record pointing at it. The original row to restore is the one the
 * `adopted` records name; when only recognized records point at the edge (an earlier build
 * adopted it), no record knows the original: the candidates are the agent's inactive clean
 * unrecorded rows in the project deactivated with cause `provenance_adopted`, one is taken, and
 * several need `confirmOriginalEdgeIds` (else `original_ambiguous`).
 */
async function planGroup(repos: Repos, requested: AdoptionRecord[], confirm: Record<string, string>): Promise<RevertItem> {
  requested.sort((a, b) => (a.id < b.id ? -1 : 1))
  const lead = requested[0]
  const adoptedId = pointsAt(lead)
  const adopted = adoptedId ? await repos.delegationEdges.get(adoptedId) : null
  const c = adopted ? classifyEdge(adopted) : null
  const hop: RevertHop = {
    edgeId: adoptedId,
    agentId: adopted?.delegateAgentId ?? lead.delegateAgentId ?? '',
    projectId: adopted?.projectId ?? lead.projectId ?? '',
    outcome: 'refused',
    reason: null,
    delegator: adopted ? {...adopted.delegator} : null,
    role: adopted?.role ?? null,
    beforeCeiling: c && (c.kind === 'recognized' || c.kind === 'recorded') ? c.ceiling : adopted ? parseCeiling(adopted.ceiling) : null,
    afterCeiling: null,
    recordId: lead.id,
    originalEdgeId: RECOGNIZED.has(lead.status) ? null : lead.originalEdgeId,
    coveredRecordIds: [],
  }
  const refuse = (reason: RevertRefusal, original: EdgeRecord | null = null): RevertItem => ({hop: {...hop, reason}, records: requested, adopted, original})

  // An edge is reverted once: a reverted (or never adopted) record cannot be reverted again.
  if (requested.some((r) => r.status !== 'adopted' && !RECOGNIZED.has(r.status)) || !adopted) return refuse('not_adopted')
  // A recognized record is revertible only while its edge is still an adopted (recognized) row.
  if (requested.some((r) => RECOGNIZED.has(r.status)) && c?.kind !== 'recognized') return refuse('not_adopted')
  if (!adopted.active) return refuse('adopted_edge_inactive')
  const active = await repos.delegationEdges.activeFor(adopted.delegateAgentId)
  if (active.length !== 1 || active[0].id !== adopted.id) return refuse('edge_changed')

  // Every record pointing at the edge: `adopted` ones name it as adopted, recognized ones as examined.
  const [byCommit, byCohort] = await Promise.all([repos.delegationAdoptions.byAdoptedEdge(adopted.id), repos.delegationAdoptions.byOriginalEdge(adopted.id)])
  const requestedIds = new Set(requested.map((r) => r.id))
  const covered = [...byCommit.filter((r) => r.status === 'adopted'), ...byCohort.filter((r) => RECOGNIZED.has(r.status))].filter((r) => !requestedIds.has(r.id))
  hop.coveredRecordIds = covered.map((r) => r.id).sort()
  const all = [...requested, ...covered]
  const confirmed = [...new Set(all.map((r) => confirm[r.id]).filter((e): e is string => e !== undefined))]

  // The originals the records name (recognized records name none).
  const named = [...new Set(all.filter((r) => r.status === 'adopted').map((r) => r.originalEdgeId).filter((e): e is string => !!e))].sort()
  let chosen: string | null
  if (named.length > 0) {
    chosen = named[0]
    if (named.length > 1 || confirmed.length > 0) {
      // Records disagree on the original row (or the caller named one): only a confirmation
      // naming one of the candidates settles which row comes back.
      if (confirmed.length !== 1 || !named.includes(confirmed[0])) return refuse('covered_original_differs')
      chosen = confirmed[0]
    }
  } else {
    const candidates = (await repos.delegationEdges.forAgent(adopted.delegateAgentId)).filter(
      (e) => !e.active && e.deactivationCause === 'provenance_adopted' && e.projectId === adopted.projectId && classifyEdge(e).kind === 'unrecorded',
    )
    if (confirmed.length > 1) return refuse('original_unavailable')
    const pick = confirmed.length === 1 ? candidates.find((e) => e.id === confirmed[0]) : candidates.length === 1 ? candidates[0] : undefined
    if (!pick) return refuse(candidates.length > 1 && confirmed.length === 0 ? 'original_ambiguous' : 'original_unavailable')
    chosen = pick.id
  }
  hop.originalEdgeId = chosen
  const original = chosen ? await repos.delegationEdges.get(chosen) : null
  if (!original || original.active || classifyEdge(original).kind !== 'unrecorded' || original.delegateAgentId !== adopted.delegateAgentId || original.projectId !== adopted.projectId) {
    return refuse('original_unavailable', original)
  }
  return {hop: {...hop, outcome: 'revert'}, records: all, adopted, original}
}

/** Fingerprint of a revert plan: every hop's fields and both edges' meaning (no timestamps). */
function revertFingerprint(items: RevertItem[]): string {
  const rows = items.map((i) => JSON.stringify([i.hop, i.records.map((r) => [r.id, r.status]), i.adopted && edgeFingerprint(i.adopted), i.original && edgeFingerprint(i.original)]))
  rows.sort()
  return createHash('sha256').update(JSON.stringify(['revert', rows])).digest('hex')
}
