import type {Agent} from '../client/agents-client.js'
import {applyAgentEvent as applyEvent, type AgentEventDto} from '../api/agent-event.js'
import type {HubClient} from '../client/hub-client.js'
import {stateOf} from './agent-render.js'

export interface WatchOptions {
  /** `--json`: one compact JSON line (`{"agent": {...}}`) per agent at start and per change. */
  json: boolean
  /** Redraw the whole view on each change (a TTY); else one line per change. */
  redraw: boolean
  render: (agents: Agent[]) => string
  out?: NodeJS.WriteStream
}

const line = (a: Agent) => `${new Date().toISOString()}  ${a.name}  ${stateOf(a)}${a.detail ? `  ${a.detail}` : ''}`

/**
 * Follows agents on the event stream until the process is interrupted: `load` gives the starting
 * set (and is called again after a reconnection, and when an unknown agent appears), events
 * update it in place. Resolves never; Ctrl-C ends the process.
 */
export async function watchAgents(client: HubClient, query: {agentId?: string; projectId?: string}, load: () => Promise<Agent[]>, o: WatchOptions): Promise<never> {
  const out = o.out ?? process.stdout
  const agents = new Map<string, Agent>()
  const emit = (changed: Agent[]) => {
    if (o.json) for (const a of changed) out.write(JSON.stringify({agent: a}) + '\n')
    else if (o.redraw) out.write('\x1b[H\x1b[2J' + o.render([...agents.values()]) + '\n')
    else for (const a of changed) out.write(line(a) + '\n')
  }
  const reload = async () => {
    const list = await load()
    agents.clear()
    for (const a of list) agents.set(a.id, a)
    emit(list)
  }
  let reloading: Promise<void> | null = null
  const onEvent = (e: AgentEventDto) => {
    const known = agents.get(e.id)
    if (e.phase === 'deleted') {
      if (!known) return
      agents.delete(e.id)
      emit([applyEvent(known, e)])
      return
    }
    if (!known) {
      // A new agent: its full record comes from a reload.
      reloading ??= reload().finally(() => (reloading = null))
      return
    }
    const next = applyEvent(known, e)
    agents.set(e.id, next)
    emit([next])
  }
  await client.followEvents(query, onEvent, reload)
  return new Promise<never>(() => {})
}
