/** The approvals table (migration 0021). */
export interface ApprovalsTable {
  id: string
  agent_id: string
  project_id: string
  agent_name: string
  tool: string
  summary: string
  /** The tool's input, JSON. */
  input: string
  state: string
  created_at: string
  expires_at: string
  /** JSON `{kind, id|index}`; null while pending. */
  decided_by: string | null
  decided_at: string | null
  reason: string | null
}
