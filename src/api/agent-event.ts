import type {AgentDto} from './dto.js'

/**
 * An `agent` event of `GET /api/v1/events` (SSE data) and of the `agent` webhook: one agent's
 * phase, activity or detail changed. One definition for the Hub, the CLI and the web pages.
 */
export interface AgentEventDto {
  id: string
  projectId: string
  name: string
  phase: string
  activity: string | null
  detail: string
  at: string
}

/** The agent view as it is after the event (the fields an event carries). */
export const applyAgentEvent = (a: AgentDto, e: AgentEventDto): AgentDto => ({...a, phase: e.phase, activity: e.activity, detail: e.detail})
