import {AppError} from '../api/app-error.js'
import type {Agent} from '../client/agents-client.js'
import {applyAgentEvent as applyEvent} from '../api/agent-event.js'
import type {HubClient} from '../client/hub-client.js'

export const WAIT_FOR = ['input', 'idle', 'done', 'any'] as const
export type WaitFor = (typeof WAIT_FOR)[number]

const isDone = (a: Pick<Agent, 'phase' | 'activity'>) => a.phase === 'stopped' || a.phase === 'error' || a.activity === 'completed' || a.activity === 'limits_exceeded'

/** Whether the agent is in the awaited state (CONTRACT "Waiting"). */
export function reached(a: Pick<Agent, 'phase' | 'activity'>, want: WaitFor): boolean {
  const input = a.phase === 'running' && a.activity === 'waiting_for_input'
  const idle = a.phase === 'running' && (a.activity === 'idle' || a.activity === 'waiting_for_input')
  if (want === 'input') return input
  if (want === 'idle') return idle
  if (want === 'done') return isDone(a)
  return idle || isDone(a)
}

const sameState = (a: Pick<Agent, 'phase' | 'activity' | 'detail'>, b: Pick<Agent, 'phase' | 'activity' | 'detail'>) => a.phase === b.phase && a.activity === b.activity && a.detail === b.detail

/**
 * Waits on the event stream (not by polling) until the agent reaches `want`. The stream is
 * opened before the agent is read, so a change between the two is never missed, and an agent
 * already in the awaited state returns at once. Phase `error` ends the wait with `agent_failed`;
 * `timeoutMs` with `wait_timeout`.
 *
 * With `changed`, the state at the call does not count, whatever it is: only a change the Hub
 * records after the first read does (`svc keys x Enter` then `svc agent wait x --for idle
 * --changed` waits for the agent to take the key and come back, never answering with the
 * `waiting_for_input` it had before). The agent as first read is `base`, when the caller has it.
 */
export async function waitForAgent(client: HubClient, read: () => Promise<Agent>, want: WaitFor, timeoutMs: number | null, opts: {changed?: boolean; base?: Agent} = {}): Promise<Agent> {
  let agent = opts.base ?? (await read())
  // --changed: the state last seen, from the first read on. Only a different state is a change;
  // an event the Hub stamped before the first read (`at` is the row's `updatedAt`; it was on its
  // way when the stream opened) is old news. A read may show a report not yet written (the
  // status writer's overlay), whose event then comes later with the same state: not a change.
  let seen: Agent | null = opts.changed ? agent : null
  const since = agent.updatedAt
  return new Promise<Agent>((resolve, reject) => {
    let finished = false
    let stream: {close(): void} | null = null
    let timer: NodeJS.Timeout | null = null
    const finish = (err: AppError | null, a: Agent) => {
      if (finished) return
      finished = true
      if (timer) clearTimeout(timer)
      stream?.close()
      if (err) reject(err)
      else resolve(a)
    }
    const check = (a: Agent, fromEvent: boolean) => {
      if (seen) {
        if (fromEvent && a.updatedAt < since) return
        const changed = !sameState(seen, a)
        seen = a
        if (!changed) return
      }
      agent = a
      if ((a.phase as string) === 'deleted') return finish(new AppError('not_found', `agent ${a.name} was deleted`), a)
      // An agent that failed never reaches any awaited state but `done`, and `done` reports it.
      if (a.phase === 'error') return finish(new AppError('agent_failed', `agent ${a.name} failed${a.error ? `: ${a.error}` : ''}`, {agent: a}), a)
      if (reached(a, want)) finish(null, a)
    }
    if (timeoutMs !== null) {
      timer = setTimeout(() => finish(new AppError('wait_timeout', `agent ${agent.name} did not reach "${want}" within ${timeoutMs / 1000}s (it is ${agent.phase}${agent.activity ? `/${agent.activity}` : ''})`, {agent}), agent), timeoutMs)
    }
    client
      .followEvents(
        {agentId: agent.id},
        (e) => {
          if (e.id === agent.id) check({...applyEvent(agent, e), updatedAt: e.at}, true)
        },
        // After each (re)connection: the state now, then events from there.
        async () => check(await read(), false),
      )
      .then(
        (s) => {
          stream = s
          if (finished) s.close()
        },
        (err: AppError) => finish(err, agent),
      )
  })
}
