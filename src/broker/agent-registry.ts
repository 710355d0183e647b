import {mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import type {RuntimeHandle} from './runtime.js'
import type {RuntimeSettings} from './runtimes/select.js'

export interface RunningAgent {
  agentId: string
  name: string
  projectId: string
  handle: RuntimeHandle
  startedAt: string
  /**
   * The runtime it was started on (a `runtimes` name or a type) and the settings entry it was
   * built from, so this agent is always handled by that runtime, whatever the default becomes.
   * Absent in registries written before runtimes were recorded: the handle's type is used.
   */
  runtimeName?: string
  runtimeSettings?: RuntimeSettings
  /** When `max_duration` runs out (ISO time); absent without a limit. */
  deadline?: string
}

/**
 * The agents this broker runs, persisted in `<stateDir>/agents.json` so a restarted broker (or a
 * restarted Hub with its co-located broker) finds the sessions it left running.
 */
export class AgentRegistry {
  private readonly file: string
  private agents = new Map<string, RunningAgent>()

  constructor(stateDir: string) {
    this.file = join(stateDir, 'agents.json')
    try {
      const list = JSON.parse(readFileSync(this.file, 'utf8')) as RunningAgent[]
      for (const a of list) this.agents.set(a.agentId, a)
    } catch {
      // No file yet, or unreadable: start empty; reconciliation with the Hub sorts out the rest.
    }
  }

  get(agentId: string): RunningAgent | undefined {
    return this.agents.get(agentId)
  }
  all(): RunningAgent[] {
    return [...this.agents.values()]
  }
  put(a: RunningAgent) {
    this.agents.set(a.agentId, a)
    this.save()
  }
  delete(agentId: string) {
    if (this.agents.delete(agentId)) this.save()
  }

  private save() {
    mkdirSync(dirname(this.file), {recursive: true})
    const tmp = `${this.file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(this.all(), null, 2))
    renameSync(tmp, this.file)
  }
}
