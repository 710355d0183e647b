/**
 * Harness configs: what program an agent runs. The built-in `shell` config runs a plain bash so
 * an agent works with no model behind it; settings `harness_configs` add or replace configs.
 */
import {DEFAULT_RESOURCES, type Resources} from './runtime.js'
import {cpuCores, quantityBytes} from './runtimes/quantity.js'
import {HARNESSES} from './harnesses/registry.js'

/** One entry of the settings map `harness_configs` (spec field names). */
export interface HarnessConfig {
  harness: string
  image?: string
  user?: string
  model?: string
  /** When set, the task is passed as this flag's value instead of a positional argument. */
  task_flag?: string
  args?: string[]
  env?: Record<string, string>
  volumes?: string[]
  auth_selected_type?: string
  secrets?: unknown[]
  resources?: Partial<Resources>
}

export const SHELL_HARNESS = 'shell'

/** One built-in config per harness module (harnesses/registry.ts), named after its type. */
export const BUILTIN_HARNESS_CONFIGS: Readonly<Record<string, HarnessConfig>> = Object.freeze({
  ...Object.fromEntries(Object.keys(HARNESSES).map((type) => [type, {harness: type}])),
  [SHELL_HARNESS]: {harness: SHELL_HARNESS, args: [], env: {PS1: '$ '}},
})

/** Executables of harness types whose binary is not simply the type's name. */
const EXECUTABLES: Record<string, string[]> = {
  [SHELL_HARNESS]: ['/bin/bash', '--noprofile', '--norc', '-i'],
}

export interface ResolvedHarness {
  /** Name of the harness config. */
  config: string
  harness: string
  command: string[]
  env: Record<string, string>
  image?: string
  /** The config's `model`, for the broker to pass in the way its harness expects. */
  model?: string
  resources: Resources
  /** The config's own `args` (before the harness module's arguments). */
  args: string[]
  /** The config's `task_flag`, when the task goes as a flag's value. */
  taskFlag?: string
  /** The config's `auth_selected_type`. */
  authType?: string
  /**
   * False when the task could not go on the command line (the `shell` harness takes no task
   * argument): the broker then types it into the terminal once the agent runs.
   */
  taskInCommand: boolean
}

export interface ResolveOptions {
  /** Settings `harness_configs` (override built-ins of the same name). */
  configs?: Record<string, HarnessConfig>
  /** A profile's `harness_overrides[name]`, merged over the config. */
  override?: Partial<HarnessConfig>
  task?: string
  /** Settings `default_resources`, under the config's own resources. */
  defaultResources?: Partial<Resources>
  /** Per-agent resources, over everything else. */
  resources?: Partial<Resources>
}

export function resolveHarness(name: string, opts: ResolveOptions = {}): ResolvedHarness {
  const base = opts.configs?.[name] ?? BUILTIN_HARNESS_CONFIGS[name]
  if (!base) {
    const known = [...new Set([...Object.keys(BUILTIN_HARNESS_CONFIGS), ...Object.keys(opts.configs ?? {})])].sort()
    throw new Error(`harness config ${JSON.stringify(name)} is not defined (known: ${known.join(', ')})`)
  }
  const cfg: HarnessConfig = {...base, ...opts.override, env: {...base.env, ...opts.override?.env}}
  if (!cfg.harness || typeof cfg.harness !== 'string') throw new Error(`harness config ${JSON.stringify(name)} has no \`harness\` type`)
  if (cfg.args !== undefined && (!Array.isArray(cfg.args) || cfg.args.some((a) => typeof a !== 'string'))) {
    throw new Error(`harness config ${JSON.stringify(name)}: \`args\` must be a list of strings`)
  }
  const command = [...(EXECUTABLES[cfg.harness] ?? [cfg.harness]), ...(cfg.args ?? [])]
  let taskInCommand = false
  if (opts.task !== undefined && opts.task !== '' && cfg.harness !== SHELL_HARNESS) {
    if (cfg.task_flag) command.push(cfg.task_flag, opts.task)
    else command.push(opts.task)
    taskInCommand = true
  }
  return {
    config: name,
    harness: cfg.harness,
    command,
    env: {...cfg.env},
    image: cfg.image,
    model: cfg.model,
    resources: mergeResources(opts.defaultResources, base.resources, opts.override?.resources, opts.resources),
    args: [...(cfg.args ?? [])],
    taskFlag: cfg.task_flag || undefined,
    authType: cfg.auth_selected_type || undefined,
    taskInCommand,
  }
}

/** DEFAULT_RESOURCES with each layer merged over it, later layers winning; each value checked. */
export function mergeResources(...layers: Array<Partial<Resources> | undefined>): Resources {
  const r: Resources = {...DEFAULT_RESOURCES}
  for (const layer of layers) {
    if (!layer) continue
    for (const k of ['cpu', 'memory', 'disk', 'gpu'] as const) {
      const v = layer[k]
      if (v !== undefined && v !== null) (r as unknown as Record<string, unknown>)[k] = k === 'gpu' ? v : String(v)
    }
  }
  cpuCores(r.cpu)
  quantityBytes(r.memory)
  quantityBytes(r.disk)
  if (!Number.isInteger(r.gpu) || r.gpu < 0) throw new Error(`gpu must be a whole number of 0 or more, not ${JSON.stringify(r.gpu)}`)
  return r
}
