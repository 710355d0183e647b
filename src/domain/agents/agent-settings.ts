import {BUILTIN_HARNESS_TYPES, isBuiltinHarnessType} from '../../api/harness-types.js'

/**
 * Hub-level settings the agents capability reads. Built from bootstrap configuration today; the
 * settings-database capability supplies the same shape from Layer-1 sections.
 */
export interface HarnessConfigSetting {
  harness: string
  image?: string
  args?: string[]
  env?: Record<string, string>
  task_flag?: string
  resources?: Partial<{cpu: string; memory: string; disk: string; gpu: number}>
  [k: string]: unknown
}

export interface AgentSettings {
  harnessConfigs: Record<string, HarnessConfigSetting>
  defaultHarnessConfig: string | null
  defaultRuntimeBroker: string | null
  defaultAgentRole: string
  quotas: {maxAgentsPerProject: number; maxAgentsPerBroker: number; enforceBrokerQuotas: boolean}
  /** Hub-level agent defaults by top-level key (`default_model`, `default_timezone`, ...). */
  defaults: Record<string, unknown>
  /** Layer-1 section `workspace` as stored (copied files, setup): sent to the broker, which checks it. */
  workspace?: unknown
  /** Layer-1 `auto_expose_ports.enabled`: agents' ports are previewed at `<hub>/agents/<id>/ports/<port>/`. */
  autoExposePorts?: boolean
}

export type AgentSettingsSource = () => Promise<AgentSettings>

export const DEFAULT_QUOTAS = {maxAgentsPerProject: 100, maxAgentsPerBroker: 50, enforceBrokerQuotas: true}

/**
 * The built-in harness configs, usable by name with no settings: a shell (an agent with no model
 * behind it) and the real coding agents (src/broker/harnesses/). Settings `harness_configs` of the
 * same name replace them.
 */
export const BUILTIN_HARNESS_CONFIGS: Record<string, HarnessConfigSetting> = Object.fromEntries(BUILTIN_HARNESS_TYPES.map((type) => [type, {harness: type}]))

/**
 * Settings `harness_configs` over the built-ins. An entry named after a built-in harness that
 * names no `harness` is of that type (`harness_configs: {claude: {env: {...}}}` points the
 * built-in `claude` config elsewhere).
 */
function harnessConfigsOf(configured: Record<string, HarnessConfigSetting> | undefined): Record<string, HarnessConfigSetting> {
  const out = {...BUILTIN_HARNESS_CONFIGS}
  for (const [name, cfg] of Object.entries(configured ?? {})) out[name] = !cfg?.harness && isBuiltinHarnessType(name) ? {...cfg, harness: name} : cfg
  return out
}

const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : d)

/** Reads the agent settings out of a merged settings tree (bootstrap). */
export function agentSettingsFromTree(tree: Record<string, any>): AgentSettings {
  const q = tree.quotas ?? {}
  return {
    defaults: Object.fromEntries(Object.entries(tree).filter(([k]) => k.startsWith('default_'))),
    harnessConfigs: harnessConfigsOf(tree.harness_configs),
    workspace: tree.workspace,
    defaultHarnessConfig: typeof tree.default_harness_config === 'string' ? tree.default_harness_config : null,
    defaultRuntimeBroker: typeof tree.default_runtime_broker === 'string' ? tree.default_runtime_broker : null,
    defaultAgentRole: typeof tree.default_agent_role === 'string' ? tree.default_agent_role : 'full',
    autoExposePorts: tree.auto_expose_ports?.enabled === true,
    quotas: {
      maxAgentsPerProject: num(q.max_agents_per_project, DEFAULT_QUOTAS.maxAgentsPerProject),
      maxAgentsPerBroker: num(q.max_agents_per_broker, DEFAULT_QUOTAS.maxAgentsPerBroker),
      enforceBrokerQuotas: typeof q.enforce_broker_quotas === 'boolean' ? q.enforce_broker_quotas : DEFAULT_QUOTAS.enforceBrokerQuotas,
    },
  }
}
