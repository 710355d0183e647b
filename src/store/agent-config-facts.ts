/**
 * What the delegation planner reads of an agent's config (SPEC "Compatibility policy V1": the
 * applied role of rule 2, the assign-mode service account of rule 1, and whether the config
 * can be read at all, `unreadable_agent_config`). An agent's config is written once, when the
 * agent is created, and never rewritten; these facts are written beside it then (and for
 * older rows by migration 0013), so a plan over 100k agents reads three small columns instead
 * of parsing 100k configs. This is the one place that decides them.
 */
export interface AgentConfigFacts {
  /** `applied.defaultAgentRole.value` when it is a string; null when the config has none. */
  appliedRole: string | null
  /** `applied.defaultCloudIdentityMode` is Assign with a non-empty service account ID. */
  assignModeServiceAccount: boolean
  /** False when the config is not JSON, not an object, or has an `applied` that is not an object. */
  readable: boolean
}

const UNREADABLE: AgentConfigFacts = {appliedRole: null, assignModeServiceAccount: false, readable: false}
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)
const valueOf = (applied: Record<string, unknown>, key: string): unknown => {
  const entry = applied[key]
  return isObject(entry) ? entry.value : undefined
}

/** The facts of a config as the agent holds it (an object when the Hub wrote it). */
export function agentConfigFacts(config: unknown): AgentConfigFacts {
  if (!isObject(config)) return UNREADABLE
  const applied = config.applied === undefined ? {} : config.applied
  if (!isObject(applied)) return UNREADABLE
  const role = valueOf(applied, 'defaultAgentRole')
  const account = valueOf(applied, 'defaultCloudIdentityServiceAccountId')
  return {
    appliedRole: typeof role === 'string' ? role : null,
    assignModeServiceAccount: valueOf(applied, 'defaultCloudIdentityMode') === 'Assign' && typeof account === 'string' && account !== '',
    readable: true,
  }
}

/** The facts of a config stored as text (rows written before the facts had columns). */
export function agentConfigFactsOfText(raw: string): AgentConfigFacts {
  let config: unknown
  try {
    config = JSON.parse(raw)
  } catch {
    return UNREADABLE
  }
  return agentConfigFacts(config)
}
