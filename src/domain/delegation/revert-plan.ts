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
 * Requested records are grouped by adopted edge: an edge is reverted once, and every `adopted`
 * record naming it is reverted with it. A hop is refused when a requested record is not
 * `adopted`, its adopted edge is no longer the agent's one active edge, the original row is
 * gone or no longer a clean inactive unrecorded row of the same agent, or the group's records
 * name different originals and `confirmOriginalEdgeIds` does not pick one of them
 * (`covered_original_differs`). Unknown record IDs refuse the whole plan (422).
 */
export async function planRevert(repos: Repos, recordIds: string[], confirm: Record<string, string> = {}): Promise<RevertPlan> {
  const ids = [...new Set(recordIds)]
  const found = await repos.delegationAdoptions.getMany(ids)
  const unknown = ids.filter((id) => !found.some((r) => r.id === id))
  if (unknown.length) throw new AppError('unrevertable_record', 'no adoption record has this ID', {recordIds: unknown.sort(), reason: 'record_not_found'})

  const groups = new Map<string, AdoptionRecord[]>()
  const items: RevertItem[] = []
  for (const r of found) {
    if (RECOGNIZED.has(r.status)) {
      items.push(await planRecognized(repos, r, confirm))
      continue
    }
    const key = r.adoptedEdgeId ? `edge:${r.adoptedEdgeId}` : `record:${r.id}`
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  for (const requested of groups.values()) items.push(await planGroup(repos, requested, confirm))
  items.sort((a, b) => (a.hop.agentId < b.hop.agentId ? -1 : a.hop.agentId > b.hop.agentId ? 1 : a.hop.recordId < b.hop.recordId ? -1 : 1))
  const hops = items.map((i) => i.hop)
  const coveredRecordIds = hops.filter((h) => h.outcome === 'revert').flatMap((h) => h.coveredRecordIds).sort()
  return {items, hops, coveredRecordIds, fingerprint: revertFingerprint(items)}
}

async function planGroup(repos: Repos, requested: AdoptionRecord[], confirm: Record<string, string>): Promise<RevertItem> {
  requested.sort((a, b) => (a.id < b.id ? -1 : 1))
  const lead = requested[0]
  const adopted = lead.adoptedEdgeId ? await repos.delegationEdges.get(lead.adoptedEdgeId) : null
  const c = adopted ? classifyEdge(adopted) : null
  const hop: RevertHop = {
    edgeId: lead.adoptedEdgeId,
    agentId: adopted?.delegateAgentId ?? lead.delegateAgentId ?? '',
    projectId: adopted?.projectId ?? lead.projectId ?? '',
    outcome: 'refused',
    reason: null,
    delegator: adopted ? {...adopted.delegator} : null,
    role: adopted?.role ?? null,
    beforeCeiling: c && (c.kind === 'recognized' || c.kind === 'recorded') ? c.ceiling : adopted ? parseCeiling(adopted.ceiling) : null,
    afterCeiling: null,
    recordId: lead.id,
    originalEdgeId: lead.originalEdgeId,
    coveredRecordIds: [],
  }
  const refuse = (reason: RevertRefusal, original: EdgeRecord | null = null): RevertItem => ({hop: {...hop, reason}, records: requested, adopted, original})

  // An edge is reverted once: a reverted (or never adopted) record cannot be reverted again.
  if (requested.some((r) => r.status !== 'adopted') || !adopted) return refuse('not_adopted')
  if (!adopted.active) return refuse('adopted_edge_inactive')
  const active = await repos.delegationEdges.activeFor(adopted.delegateAgentId)
  if (active.length !== 1 || active[0].id !== adopted.id) return refuse('edge_changed')

  const all = (await repos.delegationAdoptions.byAdoptedEdge(adopted.id)).filter((r) => r.status === 'adopted')
  const requestedIds = new Set(requested.map((r) => r.id))
  const covered = all.filter((r) => !requestedIds.has(r.id))
  hop.coveredRecordIds = covered.map((r) => r.id).sort()
  const candidates = [...new Set(all.map((r) => r.originalEdgeId).filter((e): e is string => !!e))].sort()
  let chosen = lead.originalEdgeId
  if (candidates.length > 1 || Object.keys(confirm).some((id) => all.some((r) => r.id === id))) {
    // Records disagree on the original row (or the caller named one): only a confirmation
    // naming one of the candidates settles which row comes back.
    const confirmed = [...new Set(all.map((r) => confirm[r.id]).filter((e): e is string => e !== undefined))]
    if (confirmed.length !== 1 || !candidates.includes(confirmed[0])) return refuse('covered_original_differs')
    chosen = confirmed[0]
  }
  hop.originalEdgeId = chosen
  const original = chosen ? await repos.delegationEdges.get(chosen) : null
  if (!original || original.active || classifyEdge(original).kind !== 'unrecorded' || original.delegateAgentId !== adopted.delegateAgentId || original.projectId !== adopted.projectId) {
    return refuse('original_unavailable', original)
  }
  return {hop: {...hop, outcome: 'revert'}, records: [...requested, ...covered], adopted, original}
}

/** Cohort records of edges an earlier build adopted: the record names the adopted edge itself. */
const RECOGNIZED = new Set(['recognized', 'recognized_above_policy'])

/**
 * Reverting an adoption made by an earlier build (a `recognized` cohort record). Its record
 * names the adopted edge as the examined one and knows no original row: the candidates are the
 * agent's inactive clean unrecorded rows in the project that adoption deactivated
 * (`provenance_adopted`). One candidate is the original; several need `confirmOriginalEdgeIds`
 * naming one of them (else `original_ambiguous`); none is `original_unavailable`.
 */
async function planRecognized(repos: Repos, record: AdoptionRecord, confirm: Record<string, string>): Promise<RevertItem> {
  const adopted = record.originalEdgeId ? await repos.delegationEdges.get(record.originalEdgeId) : null
  const c = adopted ? classifyEdge(adopted) : null
  const hop: RevertHop = {
    edgeId: adopted?.id ?? null,
    agentId: adopted?.delegateAgentId ?? record.delegateAgentId ?? '',
    projectId: adopted?.projectId ?? record.projectId ?? '',
    outcome: 'refused',
    reason: null,
    delegator: adopted ? {...adopted.delegator} : null,
    role: adopted?.role ?? null,
    beforeCeiling: c && c.kind === 'recognized' ? c.ceiling : null,
    afterCeiling: null,
    recordId: record.id,
    originalEdgeId: null,
    coveredRecordIds: [],
  }
  const refuse = (reason: RevertRefusal): RevertItem => ({hop: {...hop, reason}, records: [record], adopted, original: null})
  if (!adopted || c?.kind !== 'recognized') return refuse('not_adopted')
  if (!adopted.active) return refuse('adopted_edge_inactive')
  const active = await repos.delegationEdges.activeFor(adopted.delegateAgentId)
  if (active.length !== 1 || active[0].id !== adopted.id) return refuse('edge_changed')
  const candidates = (await repos.delegationEdges.forAgent(adopted.delegateAgentId)).filter(
    (e) => !e.active && e.deactivationCause === 'provenance_adopted' && e.projectId === adopted.projectId && classifyEdge(e).kind === 'unrecorded',
  )
  let original = candidates.length === 1 ? candidates[0] : null
  if (confirm[record.id] !== undefined) original = candidates.find((e) => e.id === confirm[record.id]) ?? null
  if (!original) return refuse(candidates.length > 1 && confirm[record.id] === undefined ? 'original_ambiguous' : 'original_unavailable')
  return {hop: {...hop, outcome: 'revert', originalEdgeId: original.id}, records: [record], adopted, original}
}

/** Fingerprint of a revert plan: every hop's fields and both edges' meaning (no timestamps). */
function revertFingerprint(items: RevertItem[]): string {
  const rows = items.map((i) => JSON.stringify([i.hop, i.records.map((r) => [r.id, r.status]), i.adopted && edgeFingerprint(i.adopted), i.original && edgeFingerprint(i.original)]))
  rows.sort()
  return createHash('sha256').update(JSON.stringify(['revert', rows])).digest('hex')
}
