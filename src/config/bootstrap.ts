import {paths} from './paths.js'
import {parseEnvValue, SERVER_KEYS, seedVariable, serverVariable} from './schema.js'
import {checkTypes, ConfigError, loadYamlFile, type LoadedYaml} from './yaml-file.js'

export type Mode = 'workstation' | 'hosted'
export type Origin = 'default' | 'seed' | 'file' | 'env' | 'workstation' | 'flag'

export interface StartFlags {
  hosted?: boolean
  config?: string
  port?: number
  host?: string
  debug?: boolean
}

/** The resolved bootstrap configuration of one Hub process. */
export interface Bootstrap {
  mode: Mode
  /** Known keys, flat and typed (see SERVER_KEYS). */
  values: Record<string, unknown>
  origins: Record<string, Origin>
  /** The merged settings tree as read from files (unknown keys kept). */
  tree: Record<string, unknown>
  /** Files that were read, for logs and the admin API. */
  files: {settings: string | null; legacy: string | null}
  logLevel: string
  warnings: string[]
}

/** A start-up refusal: the CLI prints the message and exits 2. */
export class BootstrapError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'BootstrapError'
  }
}

/** Top-level hub sections that rule 2 of `--config` selection takes from the --config file. */
const HUB_SECTIONS = ['telemetry', 'quotas', 'agent_secrets', 'project_defaults', 'default_harness_config', 'default_timezone']
const isHubSection = (k: string) => HUB_SECTIONS.includes(k) || k.startsWith('default_cloud_identity_')

function getPath(tree: Record<string, unknown>, key: string): unknown {
  let cur: unknown = tree
  for (const seg of key.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined
    cur = (cur as Record<string, unknown>)[seg]
  }
  return cur
}

const hasServer = (f: LoadedYaml | null) => !!f && Object.prototype.hasOwnProperty.call(f.data, 'server')

/** Applies the spec's three `--config` selection rules and the legacy server config file. */
function selectFiles(env: NodeJS.ProcessEnv, configPath: string | undefined) {
  const p = paths(env)
  const global = loadYamlFile(p.globalSettings)
  const used: LoadedYaml[] = []
  const warnings: string[] = []
  let tree: Record<string, unknown>
  let settingsFile: string | null = null
  let legacyFile: string | null = null
  let config: LoadedYaml | null = null

  if (hasServer(global)) {
    // Rule 1: the global file has a server key; the --config file is not read (not even parsed).
    tree = {...global!.data}
    used.push(global!)
    settingsFile = global!.file
    if (configPath) warnings.push(`--config ${configPath} is not read: ${global!.file} has a server block, which wins`)
  } else if ((config = configPath ? loadConfigFile(configPath) : null) && hasServer(config)) {
    // Rule 2: server block and hub sections from --config, everything else from the global file.
    tree = {}
    for (const [k, v] of Object.entries(global?.data ?? {})) if (k !== 'server' && !isHubSection(k)) tree[k] = v
    for (const [k, v] of Object.entries(config.data)) if (k === 'server' || isHubSection(k)) tree[k] = v
    if (global) used.push(global)
    used.push(config)
    settingsFile = config.file
  } else {
    // Rule 3: the --config file only when no global file exists; the legacy file layered.
    const base = config && !global ? config : global
    tree = {...(base?.data ?? {})}
    if (base) used.push(base)
    settingsFile = base?.file ?? null
    const legacy = loadYamlFile(p.legacyServerConfig)
    if (legacy) {
      checkLegacyTypes(legacy)
      tree.server = hasServer(legacy) ? legacy.data.server : legacy.data
      legacyFile = legacy.file
    }
  }
  for (const f of used) {
    const err = checkTypes(f, SERVER_KEYS)
    if (err) throw err
    checkSchemaVersion(f)
  }
  return {tree, settingsFile, legacyFile, warnings}
}

function loadConfigFile(configPath: string): LoadedYaml {
  const config = loadYamlFile(configPath)
  if (!config) throw new BootstrapError(`--config ${configPath}: file not found`)
  return config
}

function checkSchemaVersion(f: LoadedYaml) {
  const v = f.data.schema_version
  if (v === undefined || v === null) {
    throw new ConfigError(f.file, 1, 1, 'schema_version', 'required; add schema_version: "1"')
  }
  if (String(v) !== '1') {
    const node = f.doc.get('schema_version', true) as {range?: [number, number, number]} | undefined
    const pos = node?.range ? f.lines.linePos(node.range[0]) : {line: 1, col: 1}
    throw new ConfigError(f.file, pos.line, pos.col, 'schema_version', `expected "1", found "${String(v)}"`)
  }
}

/** The legacy file holds the server block's keys at its top level; check them as `server.*`. */
function checkLegacyTypes(legacy: LoadedYaml) {
  if (hasServer(legacy)) {
    const err = checkTypes(legacy, SERVER_KEYS)
    if (err) throw err
    return
  }
  const specs = Object.fromEntries(
    Object.entries(SERVER_KEYS)
      .filter(([k]) => k.startsWith('server.'))
      .map(([k, s]) => [k.slice('server.'.length), s]),
  )
  const err = checkTypes(legacy, specs)
  if (err) throw new ConfigError(err.file, err.line, err.column, err.key ? `server.${err.key}` : null, err.problem)
}

/** Parses the deployment mode exactly as the spec says: case-sensitive, anything else refused. */
export function parseMode(raw: unknown): Mode {
  const v = raw === undefined || raw === null ? '' : String(raw)
  if (v === '' || v === 'workstation') return 'workstation'
  if (v === 'hosted' || v === 'production') return 'hosted'
  throw new BootstrapError(`invalid server mode "${v}": expected workstation or hosted (production is the legacy name of hosted)`)
}

/**
 * Resolves bootstrap configuration in the spec's order: coded defaults, then SVC_SEED_*, then the
 * settings file, then SVC_SERVER_*; then the mode's forced values and the start flags.
 * Throws ConfigError for a malformed file and BootstrapError for a bad variable or mode.
 */
export function resolveBootstrap(flags: StartFlags = {}, env: NodeJS.ProcessEnv = process.env): Bootstrap {
  const {tree, settingsFile, legacyFile, warnings} = selectFiles(env, flags.config)
  const values: Record<string, unknown> = {}
  const origins: Record<string, Origin> = {}
  const set = (key: string, value: unknown, origin: Origin) => {
    values[key] = value
    origins[key] = origin
  }
  const fromEnv = (variable: string, key: string) => {
    const raw = env[variable]
    if (raw === undefined) return undefined
    try {
      return parseEnvValue(variable, SERVER_KEYS[key], raw)
    } catch (err) {
      throw new BootstrapError((err as Error).message)
    }
  }

  for (const [key, spec] of Object.entries(SERVER_KEYS)) {
    if (spec.default !== undefined) set(key, spec.default, 'default')
    const seeded = fromEnv(seedVariable(key), key)
    if (seeded !== undefined) set(key, seeded, 'seed')
    const fileValue = getPath(tree, key)
    if (fileValue !== undefined && fileValue !== null) {
      set(key, SERVER_KEYS[key].type === 'list' && typeof fileValue === 'string' ? fileValue.split(',').map((s) => s.trim()).filter(Boolean) : fileValue, 'file')
    }
    const variable = serverVariable(key)
    if (variable) {
      const v = fromEnv(variable, key)
      if (v !== undefined) set(key, v, 'env')
    }
  }

  // A bad server.mode is refused even when --hosted overrides it: the configuration is wrong.
  const configuredMode = parseMode(values['server.mode'])
  const mode = flags.hosted ? 'hosted' : configuredMode
  if (flags.hosted) set('server.mode', 'hosted', 'flag')

  if (mode === 'workstation') {
    // Save rule 6: these are overridden at every start of a workstation Hub.
    set('server.broker.enabled', true, 'workstation')
    set('server.broker.host', '127.0.0.1', 'workstation')
    set('server.hub.host', '127.0.0.1', 'workstation')
    set('server.auth.dev_mode', true, 'workstation')
    set('server.storage.provider', 'local', 'workstation')
    set('server.secrets.backend', 'local', 'workstation')
  } else {
    if (!values['server.hub.host']) set('server.hub.host', '0.0.0.0', 'default')
    if (values['server.auth.dev_mode'] === undefined) set('server.auth.dev_mode', false, 'default')
    if (values['server.broker.enabled'] === undefined) set('server.broker.enabled', false, 'default')
  }
  if (flags.port !== undefined) set('server.hub.port', flags.port, 'flag')
  if (flags.host !== undefined) set('server.hub.host', flags.host, 'flag')

  for (const key of ['server.hub.port', 'server.broker.port']) {
    const port = values[key]
    if (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65535) {
      const from = origins[key] === 'env' ? serverVariable(key) : origins[key] === 'seed' ? seedVariable(key) : key
      throw new BootstrapError(`${from}: expected a port number from 0 to 65535, found ${JSON.stringify(port)}`)
    }
  }

  const driver = values['server.database.driver'] as string
  if (!SERVER_KEYS['server.database.driver'].oneOf!.includes(driver)) {
    throw new BootstrapError(`invalid server.database.driver "${driver}": expected sqlite or postgres`)
  }
  if (!values['server.database.url']) {
    if (driver === 'postgres') throw new BootstrapError('server.database.url is required with the postgres driver')
    set('server.database.url', paths(env).embeddedDatabase, 'default')
  }

  let logLevel = String(values['server.log_level'])
  let logLevelFrom = 'server.log_level'
  if (env.SVC_LOG_LEVEL) {
    logLevel = env.SVC_LOG_LEVEL
    logLevelFrom = 'SVC_LOG_LEVEL'
  }
  if (flags.debug) logLevel = 'debug'
  if (!SERVER_KEYS['server.log_level'].oneOf!.includes(logLevel)) {
    throw new BootstrapError(`${logLevelFrom}: invalid log level "${logLevel}": expected one of ${SERVER_KEYS['server.log_level'].oneOf!.join(', ')}`)
  }
  if (legacyFile) warnings.push(`using the deprecated server config file ${legacyFile}; move its keys under server: in settings.yaml`)

  return {mode, values, origins, tree, files: {settings: settingsFile, legacy: legacyFile}, logLevel, warnings}
}
