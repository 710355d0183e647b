import {existsSync, readFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {parseDocument} from 'yaml'
import {AppError} from '../api/app-error.js'
import {paths} from './paths.js'
import {findProjectDir} from './project-files.js'
import {nodeAt} from './schema/walk.js'
import {mergeEdits} from './merge-patch.js'
import {editSettingsFile} from './settings-file-edit.js'
import {formatIssue, pathKey, type SettingsIssue} from './settings-issues.js'
import {assertReadable, getIn, loadSettings, resolveSettings, type EffectiveValue, type FileScope, type Layer, type SettingOrigin} from './settings-loader.js'
import {validateSettingsText} from './settings-validate.js'
import {keyPath, parseSettingValue} from './settings-values.js'
import {yamlToJS} from './yaml-aliases.js'

/** What `svc config` commands work on: a working directory and an environment. */
export interface ConfigContext {
  cwd: string
  env: NodeJS.ProcessEnv
}

export interface ConfigListResult {
  files: Array<{path: string; scope: FileScope}>
  activeProfile: string | null
  values: EffectiveValue[]
  issues: SettingsIssue[]
}

export interface ConfigGetResult {
  key: string
  /** The effective value (a mapping for a block); null when not set and without default. */
  value: unknown
  /** Origin of the value; `mixed` for a block whose values come from several places; null when unset. */
  origin: SettingOrigin | 'mixed' | null
  /** The leaf values behind it, with their origins. */
  sources: EffectiveValue[]
}

export interface ConfigSetResult {
  key: string
  value: unknown
  file: string
  scope: FileScope
  created: boolean
  changed: boolean
  /** Problems of the settings after the edit (for example a profile naming a missing runtime). */
  warnings: string[]
}

export interface ConfigUnsetResult {
  key: string
  file: string
  scope: FileScope
  removed: boolean
  warnings: string[]
}

export interface ConfigValidateResult {
  valid: boolean
  files: string[]
  errors: SettingsIssue[]
  warnings: SettingsIssue[]
}

export async function listSettings(ctx: ConfigContext): Promise<ConfigListResult> {
  const s = await loadSettings(ctx)
  return {files: s.files, activeProfile: s.profile?.name ?? null, values: s.values, issues: s.issues}
}

export async function getSetting(key: string, ctx: ConfigContext): Promise<ConfigGetResult> {
  const path = keyPath(key)
  const s = await loadSettings(ctx)
  assertReadable(s)
  const value = getIn(s.tree, path)
  const canonical = pathKey(path)
  const sources = s.values.filter((v) => v.key === canonical || v.key.startsWith(canonical + '.'))
  if (value === undefined) {
    if (!nodeAt(path)) throw new AppError('usage_error', `unknown setting "${key}": see \`svc config list\` and docs/settings.md for the keys`)
    return {key: canonical, value: null, origin: null, sources: []}
  }
  const origins = new Set(sources.map((v) => v.origin))
  return {key: canonical, value, origin: origins.size === 1 ? [...origins][0] : origins.size ? 'mixed' : null, sources}
}

/**
 * Links a checkout to a project: writes `hub.grove_id` into `<checkout>/.svc/settings.yaml`
 * (comments and other keys kept). Answers the file.
 */
export async function linkCheckout(checkout: string, projectId: string): Promise<string> {
  const file = join(checkout, '.svc', 'settings.yaml')
  const path = keyPath('hub.grove_id')
  await editSettingsFile(file, [{path, value: projectId}], {check: refuseInvalid(file, path), mode: 0o644})
  return file
}

/** The file `set` and `unset` write: `--global`, else the checkout's `.svc/settings.yaml`, else global. */
export function targetFile(global: boolean, ctx: ConfigContext): {file: string; scope: FileScope} {
  if (!global) {
    const dir = findProjectDir(ctx.cwd, ctx.env)
    if (dir) return {file: join(dir, 'settings.yaml'), scope: 'project'}
  }
  return {file: paths(ctx.env).globalSettings, scope: 'global'}
}

/** Refuses an edit that makes the edited key itself invalid (a required key removed, a bad value). */
function refuseInvalid(file: string, path: string[]) {
  const key = pathKey(path)
  return (text: string) => {
    const problems = validateSettingsText(file, text).issues.filter((i) => i.severity === 'error' && (i.key === key || i.key.startsWith(key + '.') || key.startsWith(i.key + '.') || i.key === ''))
    if (problems.length) throw new AppError('usage_error', `not written: ${problems.map(formatIssue).join('; ')}`)
  }
}

async function problemsAfter(ctx: ConfigContext, path: string[]): Promise<string[]> {
  const s = await loadSettings(ctx)
  const section = path[0]
  return s.issues.filter((i) => i.severity === 'error' && (i.key === section || i.key.startsWith(section + '.') || i.key === 'active_profile')).map(formatIssue)
}

/**
 * Sets one key. A mapping (JSON object) is merged into the block the file holds, key by key and
 * recursively, null removing a key (mergePatch): `set runtimes.dev.env '{"B":"2"}'` keeps `A`.
 * Lists and scalars replace. The result's `value` is what the key holds afterwards.
 */
export async function setSetting(key: string, raw: string, global: boolean, ctx: ConfigContext): Promise<ConfigSetResult> {
  const path = keyPath(key)
  const value = parseSettingValue(path, raw)
  const {file, scope} = targetFile(global, ctx)
  const merge = typeof value === 'object' && value !== null && !Array.isArray(value)
  const edits = merge ? (data: unknown) => mergeEdits(path, getIn(data as Record<string, unknown>, path), value) : [{path, value}]
  const r = await editSettingsFile(file, edits, {check: refuseInvalid(file, path), mode: scope === 'global' ? 0o600 : 0o644})
  const now = merge ? getIn((yamlToJS(parseDocument(r.text)) ?? {}) as Record<string, unknown>, path) ?? value : value
  return {key, value: now, file, scope, created: r.created, changed: r.changed, warnings: await problemsAfter(ctx, path)}
}

const isEmptyMap = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0

export async function unsetSetting(key: string, global: boolean, ctx: ConfigContext): Promise<ConfigUnsetResult> {
  const path = keyPath(key)
  const {file, scope} = targetFile(global, ctx)
  if (!existsSync(file)) return {key, file, scope, removed: false, warnings: []}
  const r = await editSettingsFile(file, [{path, value: null}], {initialText: null, check: refuseInvalid(file, path)})
  // A block the removal left empty goes too (no `cli: {}` behind), up to the first non-empty one.
  for (let up = path.slice(0, -1); r.changed && up.length; up = up.slice(0, -1)) {
    const left = getIn(parseDocument(readFileSync(r.file, 'utf8')).toJS({maxAliasCount: 100}) as Record<string, unknown>, up)
    if (!isEmptyMap(left)) break
    await editSettingsFile(file, [{path: up, value: null}], {initialText: null, check: refuseInvalid(file, up)})
  }
  return {key, file, scope, removed: r.changed, warnings: r.changed ? await problemsAfter(ctx, path) : []}
}

/**
 * Validates one file as it would be loaded (over the global file, for cross-references), or,
 * without a file, the whole layering of the working directory with the environment overrides.
 */
export async function validateSettings(file: string | undefined, ctx: ConfigContext): Promise<ConfigValidateResult> {
  let issues: SettingsIssue[]
  let files: string[]
  if (file) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      throw new AppError('usage_error', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
    }
    const layers: Layer[] = []
    const globalFile = paths(ctx.env).globalSettings
    if (resolve(file) !== globalFile && existsSync(globalFile)) layers.push({scope: 'global', validated: validateSettingsText(globalFile, readFileSync(globalFile, 'utf8'))})
    layers.push({scope: 'project', validated: validateSettingsText(file, text)})
    issues = resolveSettings(layers, {}).issues.filter((i) => i.file === file)
    files = [file]
  } else {
    const s = await loadSettings(ctx)
    issues = s.issues
    files = s.files.map((f) => f.path)
  }
  const errors = issues.filter((i) => i.severity === 'error')
  return {valid: errors.length === 0, files, errors, warnings: issues.filter((i) => i.severity === 'warning')}
}
