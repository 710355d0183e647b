import type {AgentEventDto as AgentEvent} from '../../src/api/agent-event.js'

export type {AgentEvent}
export {applyAgentEvent as applyEvent} from '../../src/api/agent-event.js'

type Listener = {onEvent: (e: AgentEvent) => void; onOpen: () => void}

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
}

/** Follows agent events; returns a stop. The stream closes when nobody follows it. */
export function followAgentEvents(onEvent: (e: AgentEvent) => void, onOpen: () => void = () => {}): () => void {
  const l = {onEvent, onOpen}
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
