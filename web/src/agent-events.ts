import type {AgentEventDto as AgentEvent} from '../../src/api/agent-event.js'
import type {ApprovalDto} from '../../src/api/approval.js'

export type {AgentEvent}
export {applyAgentEvent as applyEvent} from '../../src/api/agent-event.js'

type Listener = {onEvent: (e: AgentEvent) => void; onOpen: () => void; onApproval?: (a: ApprovalDto) => void}

/** The data of an `approval_requested` event (CONTRACT "Approvals"). */
export interface ApprovalRequested {
  approval: ApprovalDto
  agent: AgentEvent
}

const listeners = new Set<Listener>()
let source: EventSource | null = null

/**
 * One EventSource per tab on GET /api/v1/events, shared by every view. The browser reconnects
 * by itself and sends `Last-Event-ID`, so no event is lost across a drop; `onOpen` runs after
 * each (re)connection so views can read their state once more.
 */
function ensure() {
  if (source) return
  source = new EventSource('/api/v1/events', {withCredentials: true})
  source.addEventListener('open', () => {
    for (const l of listeners) l.onOpen()
  })
  source.addEventListener('agent', (m) => {
    let e: AgentEvent
    try {
      e = JSON.parse((m as MessageEvent<string>).data) as AgentEvent
    } catch {
      return
    }
    for (const l of listeners) l.onEvent(e)
  })
  // A harness asks permission (approvals.md): views that show approvals read them again.
  source.addEventListener('approval_requested', (m) => {
    let d: ApprovalRequested
    try {
      d = JSON.parse((m as MessageEvent<string>).data) as ApprovalRequested
    } catch {
      return
    }
    for (const l of listeners) l.onApproval?.(d.approval)
  })
}

/** Follows agent events; returns a stop. The stream closes when nobody follows it. */
export function followAgentEvents(onEvent: (e: AgentEvent) => void, onOpen: () => void = () => {}, onApproval?: (a: ApprovalDto) => void): () => void {
  const l = {onEvent, onOpen, onApproval}
  listeners.add(l)
  ensure()
  return () => {
    listeners.delete(l)
    if (!listeners.size && source) {
      source.close()
      source = null
    }
  }
}

/** The agent as an event leaves it. */

/** The state that asks for a person: the agent waits for an answer. */
export const needsYou = (a: {phase: string; activity: string | null}) => a.phase === 'running' && a.activity === 'waiting_for_input'
