import type {PassTx} from '../../store/pass-transaction.js'
import type {EdgeFacts, EdgeRecord} from '../../store/repositories/delegation-edges.js'
import {newId} from '../shared/secrets.js'
import {classifyEdge, edgeFingerprint} from './edge-class.js'
import {ADOPTED_SOURCE_KIND, CURRENT_PROVENANCE_VERSION, POLICY_V1_NAME} from './policy-v1.js'
import type {SkipReason} from './types.js'

export interface AdoptableHop {
  edgeId: string
  agentId: string
  projectId: string
  afterCeiling: string[]
  beforeFingerprint: string
}

export type AdoptResult = {ok: true; adopted: EdgeRecord; original: EdgeFacts} | {ok: false; reason: SkipReason}

/** What an edge looked like, for audit and record summaries (never a token or session). */
export function edgeSummary(e: EdgeFacts | EdgeRecord): Record<string, unknown> {
  return {
    edgeId: e.id,
    delegator: e.delegator,
    delegateAgentId: e.delegateAgentId,
    projectId: e.projectId,
    role: e.role,
    provenanceVersion: e.provenanceVersion,
    sourceCredentialKind: e.sourceCredentialKind,
    ceiling: e.ceiling === null ? null : (JSON.parse(e.ceiling) as unknown),
    active: e.active,
  }
}

/**
 * Writes one adopted hop inside the caller's transaction: the original row must still be the
 * agent's active, clean unrecorded edge with the planned fingerprint; it is deactivated with
 * cause `provenance_adopted` and an adopted row is inserted with the real delegator, delegate,
 * project and role, `system_migration` as source, the V1 ceiling bound to the project, no
 * session or token evidence, and the admin as initiator when an admin commits it.
 * Refuses with `edge_changed` (nothing written) when the row moved on. `read` is the original
 * row when the caller knows it as this transaction reads it (read in it, or known current: the
 * start-up pass); null: not among the agent's active edges. The deactivation is conditional on
 * the row being active either way. `checked`: `read` is the very row the caller planned as
 * `adopt` (so unrecorded) and whose fingerprint it compared with `beforeFingerprint` (the
 * start-up pass): not classified and hashed a second time.
 */
export async function adoptHop(tx: Pick<PassTx, 'delegationEdges'>, hop: AdoptableHop, now: string, initiator: {kind: string; id: string} | null, read?: EdgeFacts | null, checked = false): Promise<AdoptResult> {
  const original = read === undefined ? await tx.delegationEdges.get(hop.edgeId) : read
  if (!original || !original.active) return {ok: false, reason: 'edge_changed'}
  if (!checked && (classifyEdge(original).kind !== 'unrecorded' || edgeFingerprint(original) !== hop.beforeFingerprint)) return {ok: false, reason: 'edge_changed'}
  if (!(await tx.delegationEdges.deactivate(original.id, 'provenance_adopted', now))) return {ok: false, reason: 'edge_changed'}
  const adopted = await tx.delegationEdges.insert({
    id: newId(),
    delegateAgentId: original.delegateAgentId,
    projectId: original.projectId,
    delegator: original.delegator,
    role: original.role,
    provenanceVersion: CURRENT_PROVENANCE_VERSION,
    sourceCredentialKind: ADOPTED_SOURCE_KIND,
    ceiling: JSON.stringify([...hop.afterCeiling].sort()),
    ceilingPolicy: POLICY_V1_NAME,
    ceilingProjectId: original.projectId,
    initiator,
    createdAt: now,
  })
  return {ok: true, adopted, original: {...original, active: false}}
}
