import {hash} from 'node:crypto'
import {isPermission} from '../authz/permissions.js'
import type {EdgeFacts} from '../../store/repositories/delegation-edges.js'
import {ADOPTED_SOURCE_KIND, CURRENT_PROVENANCE_VERSION, POLICY_V1_NAME} from './policy-v1.js'

/**
 * What an edge row is, read from the row alone:
 * - `unrecorded`: a clean version-0 row (no source kind, no ceiling, no policy mark);
 * - `recognized`: an adopted row (system_migration, V1 ceiling bound to its own project);
 * - `recorded`: a row written at creation with provenance and a ceiling;
 * - `unknown_version`, `malformed_provenance`, `malformed_ceiling`: anything else.
 */
export type EdgeClass =
  | {kind: 'unrecorded'}
  | {kind: 'recorded'; ceiling: string[]}
  | {kind: 'recognized'; ceiling: string[]}
  | {kind: 'unknown_version'}
  | {kind: 'malformed_provenance'}
  | {kind: 'malformed_ceiling'}

/** A ceiling is a JSON array of distinct known permission IDs; null when it is anything else. */
export function parseCeiling(raw: string | null): string[] | null {
  if (raw === null) return null
  let v: unknown
  try {
    v = JSON.parse(raw)
  } catch {
    return null
  }
  if (!Array.isArray(v) || !v.every((p) => typeof p === 'string' && isPermission(p))) return null
  if (new Set(v).size !== v.length) return null
  return [...(v as string[])].sort()
}

/**
 * `parse` reads the ceiling text; the planner passes one that remembers each distinct text, as
 * a plan over 100k adopted edges sees only a handful of them.
 */
// Classes without a ceiling, shared (a plan classifies every edge: 100k objects fewer).
const UNRECORDED: EdgeClass = Object.freeze({kind: 'unrecorded'})
const MALFORMED_PROVENANCE: EdgeClass = Object.freeze({kind: 'malformed_provenance'})
const UNKNOWN_VERSION: EdgeClass = Object.freeze({kind: 'unknown_version'})
const MALFORMED_CEILING: EdgeClass = Object.freeze({kind: 'malformed_ceiling'})

export function classifyEdge(e: EdgeFacts, parse: (raw: string | null) => string[] | null = parseCeiling): EdgeClass {
  if (e.provenanceVersion === 0) {
    const clean = e.sourceCredentialKind === null && e.ceiling === null && e.ceilingPolicy === null && e.ceilingProjectId === null
    return clean ? UNRECORDED : MALFORMED_PROVENANCE
  }
  if (e.provenanceVersion !== CURRENT_PROVENANCE_VERSION) return UNKNOWN_VERSION
  if (!e.sourceCredentialKind) return MALFORMED_PROVENANCE
  const adopted = e.sourceCredentialKind === ADOPTED_SOURCE_KIND
  // An adopted row must carry the V1 mark bound to its own project; a recorded one carries none.
  if (adopted ? e.ceilingPolicy !== POLICY_V1_NAME || e.ceilingProjectId !== e.projectId : e.ceilingPolicy !== null) return MALFORMED_PROVENANCE
  const ceiling = parse(e.ceiling)
  if (!ceiling) return MALFORMED_CEILING
  return adopted ? {kind: 'recognized', ceiling} : {kind: 'recorded', ceiling}
}

/**
 * Fingerprint of an edge's meaning, for "the edge has not changed since it was planned".
 * Timestamps are left out on purpose: no timestamp ever selects or excludes an edge (spec).
 */
export function edgeFingerprint<E extends EdgeFacts>(e: E): string {
  const meaning = JSON.stringify([e.id, e.delegateAgentId, e.projectId, e.delegator.kind, e.delegator.id, e.role, e.provenanceVersion, e.sourceCredentialKind, e.ceiling, e.ceilingPolicy, e.ceilingProjectId, e.active])
  return hash('sha256', meaning, 'hex')
}
