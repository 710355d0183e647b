/** Shapes shared by the planner, the start-up migration, the admin API and the walk. */

export const OUTCOMES = ['adopt', 'recognized', 'recognized_above_policy', 'recorded', 'excluded'] as const
export type Outcome = (typeof OUTCOMES)[number]

/** Exclusion reasons in rule order: the first failing rule is the reason (SPEC "Hop outcomes"). */
export const EXCLUSION_REASONS = [
  'missing_edge',
  'duplicate_active_edges',
  'scope_mismatch',
  'unsupported_delegator_type',
  'no_principal_root',
  'root_missing',
  'root_inactive',
  'parent_missing',
  'parent_deleted',
  'ancestor_excluded',
  'cycle',
  'too_deep',
  'delegator_ancestry_mismatch',
  'unknown_provenance_version',
  'malformed_provenance',
  'malformed_ceiling',
  'role_none',
  'unknown_role',
  'unreadable_agent_config',
] as const
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number]

/** Skip and refusal reasons of records and revert hops. */
export const SKIP_REASONS = ['edge_changed', 'ancestor_not_adopted', 'fingerprint_changed', 'covered_original_differs'] as const
export type SkipReason = (typeof SKIP_REASONS)[number]

/** Record statuses. `adopted` is the contract's name for an adopted record. */
export const RECORD_STATUSES = ['pending', 'adopted', 'skipped_changed', 'reverted', 'excluded', 'recognized', 'recognized_above_policy', 'recorded'] as const
export type RecordStatus = (typeof RECORD_STATUSES)[number]

export const RECORD_ORIGIN = {startup: 'startup_migration', admin: 'admin_commit'} as const

/** How deep the walk and the planner look above an agent; deeper chains are `too_deep`. */
export const MAX_WALK_DEPTH = 32

/** Hub settings keys (SPEC "Adoption record"). */
export const MARKER_KEY = 'migration_delegation_provenance_adoption_v1'
export const COHORT_KEY = 'delegation_provenance_adoption_cohort'
export const BACKFILL_MARKER_KEY = 'migration_delegation_edge_backfill_v1'
/** Raise when a build fixes how the retry pass decides; a lower stored value reruns it once. */
export const RETRY_VERSION = 1

/** A hop as the API shows it (CONTRACT.md "Hop"). Ceilings are sorted arrays or null. */
export interface Hop {
  edgeId: string | null
  agentId: string
  projectId: string
  outcome: Outcome
  reason: ExclusionReason | SkipReason | null
  delegator: {kind: string; id: string} | null
  role: string | null
  beforeCeiling: string[] | null
  afterCeiling: string[] | null
  recordId: string | null
}

export interface Marker {
  retryVersion: number
  counts: Record<string, number>
  writtenAt: string
}

export interface CohortHeader {
  takenAt: string
  recordCount: number
}

/** Denial details of a hop whose provenance is unrecorded (SPEC "Errors", denial details). */
export const ADOPTION_STATUS_ROUTE = '/api/v1/admin/delegation-adoption'
export const UNRECORDED_DENIAL = {
  deny_cause: 'ceiling_unrecorded',
  remediation: 'delegation_provenance_adoption',
  remediation_path: ADOPTION_STATUS_ROUTE,
} as const
