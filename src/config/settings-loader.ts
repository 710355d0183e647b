import {existsSync, readFileSync} from 'node:fs'
import {paths} from './paths.js'
import {findProjectSettings} from './project-files.js'
import {SETTINGS_SCHEMA} from './schema/settings-schema.js'
import type {LeafNode, ObjectNode, SchemaNode} from './schema/types.js'
import {envOverrides} from './schema/walk.js'
import {AppError} from '../api/app-error.js'
import {formatIssue, pathKey, type Location, type SettingsIssue} from './settings-issues.js'
import type {ValidatedFile} from './settings-validate.js'
import {resolveProfile, type ResolvedProfile} from './settings-profile.js'

export type SettingOrigin = 'default' | 'global' | 'project' | 'environment'
export type FileScope = 'global' | 'project'

/** One effective value and where it came from. */
export interface EffectiveValue {
  key: string
  value: unknown
  origin: SettingOrigin
  /** File and position for `global` and `project`. */
  file?: string
  line?: number
  column?: number
  /** The variable for `environment`. */
  variable?: string
  /** False for keys the schema does not know (kept, reported as warnings). */
  known: boolean
}

export interface LoadedSettings {
  /** Files that exist, in merge order; `parsed` false for a file that cannot be parsed (it contributes nothing). */
  files: Array<{path: string; scope: FileScope; parsed: boolean}>
  /** The merged tree: defaults, files and environment; unknown keys kept. */
  tree: Record<string, unknown>
  /** Every effective leaf value, in key order. */
  values: EffectiveValue[]
  /** Errors and warnings of every file and variable, then of cross-references. */
  issues: SettingsIssue[]
  /** The active profile resolved against runtimes and harness configurations, when one is active. */
  profile: ResolvedProfile | null
}

export interface LoadOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** Override the global file (default `~/.svc/settings.yaml`). */
  globalFile?: string | null
  /** Override the project file (default: found from cwd); null for none. */
  projectFile?: string | null
}

export interface Layer {
  scope: FileScope
  validated: ValidatedFile
}

type Tree = Record<string, unknown>
const isPlainObject = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Mappings merge key by key; anything else is replaced by the later layer. */
export function deepMerge(base: Tree, over: Tree): Tree {
  const out: Tree = {...base}
  for (const [k, v] of Object.entries(over)) out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Tree, v) : v
  return out
}

interface Leaf {
  path: string[]
  value: unknown
  known: boolean
}

/** Leaves of a tree as the schema sees them: scalars, lists, `any` values and empty mappings. */
export function leavesOf(tree: unknown, schema: SchemaNode | null = SETTINGS_SCHEMA, path: string[] = []): Leaf[] {
  const known = schema !== null
  const container = schema === null || schema.kind === 'object' || schema.kind === 'map'
  if (!isPlainObject(tree) || Object.keys(tree).length === 0 || !container) return [{path, value: tree, known}]
  const out: Leaf[] = []
  for (const [k, v] of Object.entries(tree)) {
    let child: SchemaNode | null = null
    if (schema?.kind === 'object') child = schema.fields[k] ?? (schema.open ? {kind: 'any', doc: ''} : null)
    else if (schema?.kind === 'map') child = schema.values
    out.push(...leavesOf(v, child, [...path, k]))
  }
  return out
}

function setIn(tree: Tree, path: readonly string[], value: unknown) {
  let cur = tree
  for (const seg of path.slice(0, -1)) {
    if (!isPlainObject(cur[seg])) cur[seg] = {}
    cur = cur[seg] as Tree
  }
  cur[path[path.length - 1]] = value
}

export function getIn(tree: unknown, path: readonly string[]): unknown {
  let cur = tree
  for (const seg of path) {
    if (!isPlainObject(cur)) return undefined
    cur = cur[seg]
  }
  return cur
}

/** Fills defaults into `tree` (in place) for every absent key of objects that exist or materialise. */
function fillDefaults(tree: Tree, schema: ObjectNode, path: string[], filled: string[][]) {
  for (const [k, child] of Object.entries(schema.fields)) {
    const p = [...path, k]
    if (child.kind === 'object') {
      const present = isPlainObject(tree[k])
      if (!present && child.materialize === false) continue
      if (tree[k] !== undefined && !present) continue
      const sub = present ? (tree[k] as Tree) : {}
      fillDefaults(sub, child, p, filled)
      if (present || Object.keys(sub).length) tree[k] = sub
    } else if (child.kind === 'map') {
      if (child.values.kind === 'object' && isPlainObject(tree[k])) {
        for (const [name, entry] of Object.entries(tree[k] as Tree)) if (isPlainObject(entry)) fillDefaults(entry, child.values, [...p, name], filled)
      }
    } else if (tree[k] === undefined && child.default !== undefined) {
      tree[k] = structuredClone(child.default)
      filled.push(p)
    }
  }
}

const TRUE = /^(true|1|yes|on)$/i
const FALSE = /^(false|0|no|off)$/i

/** The value an `SVC_*` override variable sets, or why it cannot (booleans and fixed sets are checked). */
export function overrideValue(node: LeafNode, raw: string): {value: unknown} | {problem: string} {
  if (node.kind === 'bool') {
    if (TRUE.test(raw.trim())) return {value: true}
    if (FALSE.test(raw.trim())) return {value: false}
    return {problem: `expected true or false, found ${JSON.stringify(raw)}`}
  }
  if (node.oneOf && !node.oneOf.includes(raw)) return {problem: `expected one of ${node.oneOf.map((v) => JSON.stringify(v)).join(', ')}, found ${JSON.stringify(raw)}`}
  return {value: raw}
}

/**
 * Merges validated layers (global, then project), then the `SVC_*` overrides, then defaults;
 * resolves the active profile. Pure: reads nothing but its arguments.
 */
export function resolveSettings(layers: Layer[], env: NodeJS.ProcessEnv): Omit<LoadedSettings, 'files'> {
  const issues: SettingsIssue[] = layers.flatMap((l) => l.validated.issues)
  let tree: Tree = {}
  const origins = new Map<string, {origin: SettingOrigin; loc?: Location; variable?: string}>()
  const locations = new Map<string, Location>()
  for (const layer of layers) {
    tree = deepMerge(tree, layer.validated.tree)
    for (const [k, loc] of layer.validated.locations) locations.set(k, loc)
    for (const leaf of leavesOf(layer.validated.tree)) {
      const k = pathKey(leaf.path)
      origins.set(k, {origin: layer.scope, loc: layer.validated.locations.get(k)})
    }
  }
  const envSet = new Map<string, string>()
  for (const o of envOverrides()) {
    const raw = env[o.variable]
    if (raw === undefined || raw === '') continue
    const parsed = overrideValue(o.node, raw)
    if ('problem' in parsed) {
      issues.push({severity: 'error', file: null, line: 0, column: 0, key: pathKey(o.path), message: parsed.problem, variable: o.variable})
      continue
    }
    setIn(tree, o.path, parsed.value)
    origins.set(pathKey(o.path), {origin: 'environment', variable: o.variable})
    envSet.set(pathKey(o.path), o.variable)
  }
  const filled: string[][] = []
  tree = structuredClone(tree)
  fillDefaults(tree, SETTINGS_SCHEMA, [], filled)
  for (const p of filled) origins.set(pathKey(p), {origin: 'default'})

  const values: EffectiveValue[] = leavesOf(tree)
    .map((leaf) => {
      const key = pathKey(leaf.path)
      const o = origins.get(key) ?? nearestOrigin(origins, leaf.path)
      const v: EffectiveValue = {key, value: leaf.value, origin: o.origin, known: leaf.known}
      if (o.loc) Object.assign(v, {file: o.loc.file, line: o.loc.line, column: o.loc.column})
      if (o.variable) v.variable = o.variable
      return v
    })
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))

  const where = (path: string[]) => {
    const variable = envSet.get(pathKey(path))
    if (variable) return {file: null, line: 0, column: 0, variable}
    const loc = locations.get(pathKey(path))
    return loc ? {file: loc.file, line: loc.line, column: loc.column} : {file: null, line: 0, column: 0}
  }
  const {profile, issues: refIssues} = resolveProfile(tree, where)
  issues.push(...refIssues)
  return {tree, values, issues, profile}
}

function nearestOrigin(origins: Map<string, {origin: SettingOrigin; loc?: Location; variable?: string}>, path: string[]) {
  for (let n = path.length - 1; n > 0; n--) {
    const o = origins.get(pathKey(path.slice(0, n)))
    if (o) return o
  }
  return {origin: 'default' as const}
}

/** The files of the layering for a working directory: global, then the checkout's project file. */
export function settingsFiles(opts: LoadOptions = {}): Array<{path: string; scope: FileScope}> {
  const env = opts.env ?? process.env
  const globalFile = opts.globalFile === undefined ? paths(env).globalSettings : opts.globalFile
  const projectFile = opts.projectFile === undefined ? findProjectSettings(opts.cwd ?? process.cwd(), env) : opts.projectFile
  const out: Array<{path: string; scope: FileScope}> = []
  if (globalFile && existsSync(globalFile)) out.push({path: globalFile, scope: 'global'})
  if (projectFile && projectFile !== globalFile && existsSync(projectFile)) out.push({path: projectFile, scope: 'project'})
  return out
}

/**
 * Loads the effective settings: global `~/.svc/settings.yaml`, then the checkout's
 * `.svc/settings.yaml`, then the `SVC_*` overrides (later wins). Never throws for content
 * problems: they are in `issues`, and an invalid value falls back to the layer below. The YAML
 * parser is only imported when a file exists, so the CLI's start-up stays cheap.
 */
export async function loadSettings(opts: LoadOptions = {}): Promise<LoadedSettings> {
  const env = opts.env ?? process.env
  const files = settingsFiles(opts)
  const layers: Layer[] = []
  if (files.length) {
    const {validateSettingsText} = await import('./settings-validate.js')
    for (const f of files) {
      let text: string
      try {
        text = readFileSync(f.path, 'utf8')
      } catch (err) {
        layers.push({scope: f.scope, validated: {file: f.path, parsed: false, tree: {}, locations: new Map(), issues: [{severity: 'error', file: f.path, line: 1, column: 1, key: '', message: `cannot read the file: ${(err as Error).message}`}]}})
        continue
      }
      layers.push({scope: f.scope, validated: validateSettingsText(f.path, text)})
    }
  }
  return {files: files.map((f, i) => ({...f, parsed: layers[i].validated.parsed})), ...resolveSettings(layers, env)}
}


/**
 * Throws 'config_invalid' (exit 2) naming `file:line:column` when a settings file exists but
 * cannot be parsed. The loader itself never throws, so `svc config validate` and `config list`
 * can report it; every command that relies on the settings calls this instead of running as if
 * the file were empty.
 */
export function assertReadable(loaded: LoadedSettings): void {
  const bad = loaded.files.find((f) => !f.parsed)
  if (!bad) return
  const issue = loaded.issues.find((i) => i.file === bad.path && i.severity === 'error')
  const where = issue ? formatIssue(issue) : bad.path
  throw new AppError('config_invalid', `cannot read the settings file ${where} (see \`svc config validate\`)`, {file: bad.path, ...(issue && {line: issue.line, column: issue.column})})
}
