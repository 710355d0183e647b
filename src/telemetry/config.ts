import type {Bootstrap} from '../config/bootstrap.js'
import {deepMerge, overrideValue} from '../config/settings-loader.js'
import {SETTINGS_SCHEMA} from '../config/schema/settings-schema.js'
import type {ObjectNode, SchemaNode} from '../config/schema/types.js'
import {envOverrides} from '../config/schema/walk.js'
import {parseDuration} from '../domain/shared/clock.js'

type Tree = Record<string, unknown>
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The `telemetry` table of the settings file, typed and with every default filled in. */
export interface TelemetryConfig {
  enabled: boolean
  cloud: {
    enabled: boolean
    endpoint: string | null
    protocol: 'grpc' | 'http'
    headers: Record<string, string>
    tls: {enabled: boolean; insecureSkipVerify: boolean}
    batch: {maxSize: number; timeoutMs: number}
  }
  hub: {enabled: boolean; reportIntervalMs: number}
  local: {enabled: boolean; file: string | null; console: boolean}
  filter: FilterConfig
  resource: Record<string, string>
}

export interface FilterConfig {
  enabled: boolean
  respectDebugMode: boolean
  include: string[]
  exclude: string[]
  redact: string[]
  hash: string[]
  samplingDefault: number
  samplingRates: Record<string, number>
}

const TELEMETRY_NODE = SETTINGS_SCHEMA.fields.telemetry as ObjectNode

/** Defaults of a schema subtree as a settings tree (the schema is the one source of defaults). */
function defaultsOf(node: SchemaNode): unknown {
  if (node.kind === 'object') {
    const out: Tree = {}
    for (const [k, child] of Object.entries(node.fields)) {
      const d = defaultsOf(child)
      if (d !== undefined) out[k] = d
    }
    return out
  }
  return 'default' in node && node.default !== undefined ? structuredClone(node.default) : undefined
}

/** The `telemetry` settings tree with nothing set: the spec's table of defaults. */
export const telemetryDefaults = (): Tree => defaultsOf(TELEMETRY_NODE) as Tree

/**
 * Merges telemetry layers, later wins key by key (global, project, template, agent). Lists and
 * scalars are replaced whole: a project's `exclude` list replaces the global one.
 */
export function mergeTelemetry(...layers: Array<Tree | null | undefined>): Tree {
  return layers.reduce<Tree>((acc, l) => (isObj(l) ? deepMerge(acc, l) : acc), {})
}

/**
 * The `SVC_TELEMETRY_*` and `SVC_OTEL_*` variables as a telemetry tree (only those set). A value
 * that does not parse is reported in `problems` and ignored, so a typo never stops a Hub.
 */
export function telemetryEnv(env: NodeJS.ProcessEnv): {tree: Tree; problems: string[]} {
  const tree: Tree = {}
  const problems: string[] = []
  for (const o of envOverrides(TELEMETRY_NODE)) {
    const raw = env[o.variable]
    if (raw === undefined || raw === '') continue
    const parsed = overrideValue(o.node, raw)
    if ('problem' in parsed) {
      problems.push(`${o.variable}: ${parsed.problem}`)
      continue
    }
    let cur = tree
    for (const seg of o.path.slice(0, -1)) cur = (cur[seg] ??= {}) as Tree
    cur[o.path[o.path.length - 1]] = parsed.value
  }
  return {tree, problems}
}

/**
 * The Hub's bootstrap with the telemetry variables over its settings-file tree. They override the
 * settings file, so they belong to the bootstrap merge the Layer-1 `telemetry` section is seeded
 * from: they apply while the section follows bootstrap, a section saved through the admin API
 * wins (spec: the database value wins for a Layer-1 key), and a save merges over them.
 */
export function withTelemetryEnv(bootstrap: Bootstrap, env: NodeJS.ProcessEnv, warn: (message: string) => void): Bootstrap {
  const {tree, problems} = telemetryEnv(env)
  for (const p of problems) warn(`telemetry: ${p} (ignored)`)
  if (!Object.keys(tree).length) return bootstrap
  const current = isObj(bootstrap.tree.telemetry) ? bootstrap.tree.telemetry : {}
  // `telemetry.enabled` is also a typed bootstrap value (SVC_SEED_TELEMETRY_ENABLED), which wins over the tree.
  const values = 'enabled' in tree ? {...bootstrap.values, 'telemetry.enabled': tree.enabled} : bootstrap.values
  return {...bootstrap, values, tree: {...bootstrap.tree, telemetry: deepMerge(current, tree)}}
}

const bool = (v: unknown, d: boolean) => (typeof v === 'boolean' ? v : d)
const strs = (v: unknown, d: string[]) => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : d)
const rate = (v: unknown, d: number) => (typeof v === 'number' && v >= 0 && v <= 1 ? v : d)
const dur = (v: unknown, d: number) => (typeof v === 'string' ? (parseDuration(v) ?? d) : d)
const strMap = (v: unknown) => (isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) : {})

/**
 * A typed configuration from a merged `telemetry` tree. Defaults come from the schema; values of
 * the wrong type fall back to the default (the settings validator refuses them before a save).
 * `hosted`: hub reporting is on whatever the tree says (spec: auto-enabled in hosted mode).
 */
export function toTelemetryConfig(tree: unknown, opts: {hosted?: boolean} = {}): TelemetryConfig {
  const t = deepMerge(telemetryDefaults(), isObj(tree) ? tree : {}) as any
  const rates: Record<string, number> = {}
  for (const [k, v] of Object.entries(isObj(t.filter?.sampling?.rates) ? t.filter.sampling.rates : {})) if (typeof v === 'number') rates[k] = rate(v, 1)
  const maxSize = Number.isInteger(t.cloud?.batch?.max_size) && t.cloud.batch.max_size >= 1 ? t.cloud.batch.max_size : 512
  return {
    enabled: bool(t.enabled, false),
    cloud: {
      enabled: bool(t.cloud?.enabled, true),
      endpoint: typeof t.cloud?.endpoint === 'string' && t.cloud.endpoint ? t.cloud.endpoint : null,
      protocol: t.cloud?.protocol === 'http' ? 'http' : 'grpc',
      headers: strMap(t.cloud?.headers),
      tls: {enabled: bool(t.cloud?.tls?.enabled, true), insecureSkipVerify: bool(t.cloud?.tls?.insecure_skip_verify, false)},
      batch: {maxSize, timeoutMs: dur(t.cloud?.batch?.timeout, 5000)},
    },
    hub: {enabled: opts.hosted === true || bool(t.hub?.enabled, true), reportIntervalMs: dur(t.hub?.report_interval, 30_000)},
    local: {enabled: bool(t.local?.enabled, false), file: typeof t.local?.file === 'string' && t.local.file ? t.local.file : null, console: bool(t.local?.console, false)},
    filter: {
      enabled: bool(t.filter?.enabled, true),
      respectDebugMode: bool(t.filter?.respect_debug_mode, true),
      include: strs(t.filter?.events?.include, []),
      exclude: strs(t.filter?.events?.exclude, []),
      redact: strs(t.filter?.attributes?.redact, []),
      hash: strs(t.filter?.attributes?.hash, []),
      samplingDefault: rate(t.filter?.sampling?.default, 1),
      samplingRates: rates,
    },
    resource: strMap(t.resource),
  }
}
