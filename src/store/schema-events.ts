/** Tables of the agent event log and the webhook outbox (migration 0015). */
import type {Generated} from 'kysely'

/** Append-only log of agent changes (migration 0015); `seq` is the SSE event ID. */
export interface AgentEventsTable {
  seq: Generated<number | string>
  agent_id: string
  project_id: string
  name: string
  phase: string
  activity: string | null
  detail: string
  prev_phase: string | null
  prev_activity: string | null
  /** The agent's `error` after and before the change (migration 0018; null on older rows). */
  error: string | null
  prev_error: string | null
  /** On an `approval_requested` row, the approval as requested (JSON; migration 0021); else null. */
  approval?: string | null
  at: string
}

/** Webhook outbox: one row per (event, channel); `id` is `<seq>:<channel>`. */
export interface NotificationDeliveriesTable {
  id: string
  event_seq: number | string
  channel: string
  url: string
  event: string
  agent_id: string
  body: string
  status: string
  attempts: Generated<number>
  next_attempt_at: string
  claimed_until: string | null
  last_error: string | null
  created_at: string
  updated_at: string
}
