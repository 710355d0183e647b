import type {AgentDto as Agent} from '../../src/api/dto.js'

/** An `agent` event of GET /api/v1/events. */
export interface AgentEvent {
  id: string
  projectId: string
  name: string
  phase: string
  activity: string | null
  detail: string
  at: string
}

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
export const applyEvent = (a: Agent, e: AgentEvent): Agent => ({...a, phase: e.phase, activity: e.activity, detail: e.detail})

/** The state that asks for a person: the agent waits for an answer. */
export const needsYou = (a: {phase: string; activity: string | null}) => a.phase === 'running' && a.activity === 'waiting_for_input'
