/** The agent create request and its per-agent overrides of the agent defaults. */
import {AppError} from '../../api/app-error.js'
import {BY_FIELD} from '../project-settings/registry.js'

export interface CreateAgentInput {
  name: string
  projectId: string
  harnessConfig?: string
  template?: string
  task?: string
  brokerId?: string
  role?: string
  /** The runtime to run on (`local`, `podman`, `docker`, a settings `runtimes` name); default: the broker's. */
  runtime?: string
  maxTurns?: number
  maxModelCalls?: number
  maxDuration?: string
  resources?: Record<string, unknown>
  model?: string
  thinkingLevel?: string
  timezone?: string
  cloudIdentityMode?: string
  cloudIdentityServiceAccountId?: string
  /** Telemetry settings of this agent over its template's and the Hub's (the `telemetry` table). */
  telemetry?: unknown
  /** Teams: the agent that leads this one (a person's `--parent`; an agent's new agents are its own children). */
  parentId?: string
  /** Teams: the budget of its subtree (teams/budgets.ts); lowered to what its parent has left. */
  limits?: Partial<Record<'maxTurns' | 'maxModelCalls' | 'maxDurationSeconds' | 'maxCostUsd' | 'maxChildren' | 'maxDepth', number>>
  /** Teams, attempts: make `<name>-1` ... `<name>-N` (teams/attempts.ts), harnesses taken in turn. */
  attempts?: number
  harnessConfigs?: string[]
  /** Teams, attempts: a command run in the agent's sandbox whenever it goes idle (teams/attempts-check.ts). */
  check?: string
  /** Set by teams/attempts.ts only (not a body field): the group of the attempt. */
  group?: string
}

/** Request fields that override the registered project settings (same validation). */
export const REQUEST_FIELDS: Record<string, string> = {
  harnessConfig: 'defaultHarnessConfig',
  template: 'defaultTemplate',
  role: 'defaultAgentRole',
  maxTurns: 'defaultMaxTurns',
  maxModelCalls: 'defaultMaxModelCalls',
  maxDuration: 'defaultMaxDuration',
  resources: 'defaultResources',
  model: 'defaultModel',
  thinkingLevel: 'defaultThinkingLevel',
  timezone: 'defaultTimezone',
  cloudIdentityMode: 'defaultCloudIdentityMode',
  cloudIdentityServiceAccountId: 'defaultCloudIdentityServiceAccountId',
}

/** Validates the request's overrides with the registry's rules; returns them keyed by setting field. */
export function requestLayer(input: CreateAgentInput): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const fields: Array<{path: string; message: string}> = []
  for (const [inputField, settingField] of Object.entries(REQUEST_FIELDS)) {
    const v = (input as unknown as Record<string, unknown>)[inputField]
    if (v === undefined) continue
    try {
      const def = BY_FIELD.get(settingField)!
      out[settingField] = def.parse(def.toRaw(v))
    } catch (err) {
      fields.push({path: inputField, message: (err as Error).message})
    }
  }
  if (fields.length) throw new AppError('validation_error', `invalid agent: ${fields.map((f) => `${f.path} ${f.message}`).join('; ')}`, {fields})
  return out
}
