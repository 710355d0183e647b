import {parseDuration} from '../shared/clock.js'

/**
 * The registered project settings. Each is stored as a `svc/`-prefixed project annotation
 * (a raw string), exposed in the API under a camelCase field, and backed by a hub-level default
 * under the top-level settings key `hubKey`. Order here is the order of every response.
 */
export interface ProjectSettingDef {
  key: `svc/${string}`
  field: string
  hubKey: string
  /** Parses a raw value (annotation, or an API value already turned to text); throws a message. */
  parse(raw: string): unknown
  /** Turns an API value into the annotation's raw string; throws a message. */
  toRaw(value: unknown): string
}

const text = (max = 500) => ({
  parse: (raw: string) => raw,
  toRaw: (v: unknown) => {
    if (typeof v !== 'string' || v.trim() === '') throw new Error('must be a non-empty string')
    if (v.length > max) throw new Error(`may be at most ${max} characters`)
    return v
  },
})

const positiveInt = {
  parse: (raw: string) => Number(raw),
  toRaw: (v: unknown) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new Error('must be a whole number of at least 1')
    return String(v)
  },
}

const oneOf = (values: readonly string[]) => ({
  parse: (raw: string) => raw,
  toRaw: (v: unknown) => {
    if (typeof v !== 'string' || !values.includes(v)) throw new Error(`must be one of ${values.join(', ')}`)
    return v
  },
})

/** IANA zone names only; `Local` (and anything the runtime does not know) is refused. */
export function isIanaTimezone(v: string): boolean {
  if (!v || v === 'Local' || !/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$|^UTC$/.test(v)) return false
  try {
    new Intl.DateTimeFormat('en', {timeZone: v})
    return true
  } catch {
    return false
  }
}

const RESOURCE_KEYS = ['cpu', 'memory', 'disk', 'gpu']

export const PROJECT_SETTINGS: readonly ProjectSettingDef[] = [
  {key: 'svc/default-template', field: 'defaultTemplate', hubKey: 'default_template', ...text(200)},
  {key: 'svc/default-harness-config', field: 'defaultHarnessConfig', hubKey: 'default_harness_config', ...text(200)},
  {key: 'svc/default-max-turns', field: 'defaultMaxTurns', hubKey: 'default_max_turns', ...positiveInt},
  {key: 'svc/default-max-model-calls', field: 'defaultMaxModelCalls', hubKey: 'default_max_model_calls', ...positiveInt},
  {
    key: 'svc/default-max-duration',
    field: 'defaultMaxDuration',
    hubKey: 'default_max_duration',
    parse: (raw) => raw,
    toRaw: (v) => {
      if (typeof v !== 'string' || parseDuration(v) === null) throw new Error('must be a duration such as 45m or 2h')
      return v
    },
  },
  {
    key: 'svc/default-resources',
    field: 'defaultResources',
    hubKey: 'default_resources',
    parse: (raw) => JSON.parse(raw),
    toRaw: (v) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('must be an object {cpu, memory, disk, gpu}')
      const extra = Object.keys(v).filter((k) => !RESOURCE_KEYS.includes(k))
      if (extra.length) throw new Error(`has unknown keys: ${extra.join(', ')}`)
      const r = v as Record<string, unknown>
      for (const k of ['cpu', 'memory', 'disk']) if (r[k] !== undefined && typeof r[k] !== 'string') throw new Error(`${k} must be a string such as "2" or "4Gi"`)
      if (r.gpu !== undefined && (typeof r.gpu !== 'number' || !Number.isInteger(r.gpu) || r.gpu < 0)) throw new Error('gpu must be a whole number of 0 or more')
      return JSON.stringify(v)
    },
  },
  {key: 'svc/default-model', field: 'defaultModel', hubKey: 'default_model', ...text(200)},
  {key: 'svc/default-thinking-level', field: 'defaultThinkingLevel', hubKey: 'default_thinking_level', ...oneOf(['none', 'low', 'medium', 'high'])},
  {key: 'svc/default-agent-role', field: 'defaultAgentRole', hubKey: 'default_agent_role', ...oneOf(['readonly', 'baseline', 'full', 'none'])},
  {
    key: 'svc/default-timezone',
    field: 'defaultTimezone',
    hubKey: 'default_timezone',
    parse: (raw) => raw,
    toRaw: (v) => {
      if (typeof v !== 'string' || !isIanaTimezone(v)) throw new Error('must be an IANA time zone name such as Europe/Paris (not Local)')
      return v
    },
  },
  {key: 'svc/default-cloud-identity-mode', field: 'defaultCloudIdentityMode', hubKey: 'default_cloud_identity_mode', ...oneOf(['Block', 'Passthrough', 'Assign'])},
  {key: 'svc/default-cloud-identity-service-account-id', field: 'defaultCloudIdentityServiceAccountId', hubKey: 'default_cloud_identity_service_account_id', ...text(300)},
  {key: 'svc/default-runtime-broker', field: 'defaultRuntimeBroker', hubKey: 'default_runtime_broker', ...text(200)},
]

export const BY_FIELD = new Map(PROJECT_SETTINGS.map((d) => [d.field, d]))
