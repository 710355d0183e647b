import type {RunningAgent} from './agent-registry.js'
import type {Runtime} from './runtime.js'

/**
 * Whether each agent still runs (the broker's liveness watch), asked once per runtime where the
 * runtime can (`areRunning`: one `tmux list-panes` for all local agents instead of a process per
 * agent), else agent by agent. A runtime that cannot be reached now cannot say an agent ended:
 * its agents count as running.
 */
export async function runningStates(agents: RunningAgent[], runtimeOf: (a: RunningAgent) => Runtime): Promise<Map<string, boolean>> {
  const byRuntime = new Map<Runtime, RunningAgent[]>()
  for (const a of agents) {
    const rt = runtimeOf(a)
    byRuntime.set(rt, [...(byRuntime.get(rt) ?? []), a])
  }
  const states = new Map<string, boolean>()
  for (const [rt, group] of byRuntime) {
    const many = rt.areRunning ? await rt.areRunning(group.map((a) => a.handle)).catch(() => null) : null
    for (const [i, a] of group.entries()) {
      states.set(a.agentId, many ? many[i] : await Promise.resolve().then(() => rt.isRunning(a.handle)).catch(() => true))
    }
  }
  return states
}
