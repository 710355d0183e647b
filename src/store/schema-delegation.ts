/**
 * The delegation tables (spec: delegation edges and the adoption records of the start-up
 * migration and admin commits), in the portable column types of schema.ts.
 */
export interface DelegationEdgesTable {
  id: string
  delegate_agent_id: string
  project_id: string
  delegator_kind: string
  delegator_id: string
  role: string
  provenance_version: number
  source_credential_kind: string | null
  ceiling: string | null
  ceiling_policy: string | null
  ceiling_project_id: string | null
  active: number
  deactivation_cause: string | null
  initiator_kind: string | null
  initiator_id: string | null
  created_at: string
  updated_at: string
}

export interface DelegationAdoptionsTable {
  id: string
  status: string
  reason: string | null
  origin: string
  original_edge_id: string | null
  adopted_edge_id: string | null
  before_fingerprint: string | null
  project_id: string | null
  delegate_agent_id: string | null
  depth: number
  actor_kind: string | null
  actor_id: string | null
  after_summary: string | null
  reverted_by_kind: string | null
  reverted_by_id: string | null
  reverted_at: string | null
  revert_summary: string | null
  created_at: string
  updated_at: string
  /** Room kept for a pending record's adoption (migration 0031); never read. */
  reserved: string | null
}
