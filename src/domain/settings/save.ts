import {readFileSync, realpathSync} from 'node:fs'
import {basename, dirname, join, resolve} from 'node:path'
import {isDeepStrictEqual} from 'node:util'
import {parseDocument} from 'yaml'
import {AppError} from '../../api/app-error.js'
import {writeFileAtomic} from '../../config/atomic-write.js'
import {paths} from '../../config/paths.js'
import {SERVER_KEYS} from '../../config/schema.js'
import {nodeAt} from '../../config/schema/walk.js'
import {editSettingsText, type SettingsEdit} from '../../config/settings-editor.js'
import {withSettingsLock} from '../../config/settings-file-edit.js'
import {validateSettingsText} from '../../config/settings-validate.js'
import type {SectionRow} from '../../store/repositories/settings-sections.js'
import type {CallContext} from '../authz/context.js'
import {mergeEdits, mergePatch} from '../../config/merge-patch.js'
import {applyFlat, applyPatch, SECTIONS, classOf, flatten, getIn, HUB_OWNED_KEYS, isObj, knownKey, layer1Defaults, META_KEYS, READ_ONLY_KEYS, sectionOf, unflatten, valueAt, WORKSTATION_FORCED, type Tree} from './keys.js'
import type {SettingsDeps} from './settings-service.js'
import {validateSections} from './validate.js'
import {yamlToJS} from '../../config/yaml-aliases.js'
import {expectedOf} from '../../config/schema/types.js'

const TOKEN_MASK = '********'

/** The final file write; a seam so tests can make it fail after the database was saved. */
export const fileWriter = {write: writeFileAtomic}
const MODES = ['', 'workstation', 'hosted', 'production']

export interface SectionResult {
  status: 'saved' | 'unchanged'
  revision: number
}

export interface SaveResult {
  /** Per Layer-1 section touched by the save. */
  sections: Record<string, SectionResult>
  /** Database sections written. */
  applied: string[]
  /** Workstation Hubs: settings-file keys written, and whether they need a restart. */
  file_keys?: string[]
  reload?: {requires_restart: boolean}
  /** Keys sent with a new value that has no effect on this Hub (forced or set by environment). */
  ignored_keys?: string[]
  notices: string[]
}

interface SaverOpts {
  deps: SettingsDeps
  now: () => string
  effectiveOf: (section: string) => Tree
  seedOf: (section: string) => Tree
  view: () => Tree
  rowOf: (section: string) => SectionRow | null
  afterWrite: (applied: string[]) => Promise<void>
}

const actorOf = (ctx: CallContext | null) => (ctx ? `${ctx.principal.kind}:${ctx.principal.id}` : 'system')
const reject = (code: 'layer0_rejected' | 'unclassified_keys_rejected' | 'unpersisted_keys_rejected' | 'hub_owned_keys_rejected' | 'unsaved_keys_rejected', message: string, keys: string[], extra: Tree = {}) =>
  new AppError(code, `${message}: ${keys.join(', ')}`, {keys, ...extra})

function realTarget(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return join(realpathSync(dirname(resolve(file))), basename(file))
  }
}

/**
 * The server-config save (spec "Server-config save rules" 1 to 8). The whole save is checked
 * before anything is written; then, holding the settings-file lock, the file is prepared in
 * memory, the database sections are written in one transaction (optimistic locking on each
 * section's revision) and the file is written last, atomically.
 */
export function createSaver(o: SaverOpts) {
  const {bootstrap, store} = o.deps
  const workstation = bootstrap.mode === 'workstation'
  /** The settings file's keys as this process last read or wrote them. */
  let fileFlat: Tree = flatten(bootstrap.tree)
  const settingsFile = () => bootstrap.files.settings ?? paths(o.deps.env).globalSettings

  /** What GET shows, unmasked, as unit keys. */
  const viewFlat = (): Tree => {
    let out: Tree = {...fileFlat}
    const covered = (k: string) => Object.keys(out).some((x) => x === k || x.startsWith(k + '.') || k.startsWith(x + '.'))
    for (const [k, v] of Object.entries(bootstrap.values)) {
      const origin = bootstrap.origins[k]
      if (origin === 'env' || origin === 'workstation' || origin === 'flag') out = applyFlat(out, k, v)
      else if (!covered(k)) out[k] = origin === 'file' ? SERVER_KEYS[k]?.default : v
    }
    for (const k of Object.keys(out)) if (out[k] === undefined || (sectionOf(k) && !READ_ONLY_KEYS.has(k))) delete out[k]
    for (const r of SECTIONS) for (const [k, v] of Object.entries(o.effectiveOf(r))) out[k] = v
    if (!('default_agent_role' in out)) out.default_agent_role = 'full'
    for (const [k, v] of Object.entries(layer1Defaults())) if (!covered(k)) out[k] = structuredClone(v)
    return out
  }

  const same = (key: string, sent: unknown, current: unknown) => {
    if (sent === null && (current === undefined || current === null)) return true
    if (key === 'server.broker.broker_token' && sent === TOKEN_MASK && typeof current === 'string' && current !== '') return true
    return isDeepStrictEqual(sent, current)
  }

  async function writeSections(ctx: CallContext | null, bySection: Record<string, Tree>, revisions: Record<string, number>): Promise<Record<string, SectionResult>> {
    const results: Record<string, SectionResult> = {}
    const applied: string[] = []
    await store.transaction(async (tx) => {
      for (const [s, units] of Object.entries(bySection)) {
        const row = await tx.settingsSections.get(s)
        const current = row?.revision ?? 0
        const expected = revisions[s]
        if (expected !== undefined && expected !== current) {
          throw new AppError('revision_conflict', `settings section ${s} changed since it was loaded (revision ${expected}, now ${current}); load it again and retry`, {section: s, expected, current, applied: []})
        }
        const base = row?.value ?? o.seedOf(s)
        // Merged into the row as read inside the transaction: a map entry saved meanwhile by
        // another writer that sent no revision is kept, not overwritten by a stale copy.
        const next = Object.entries(units).reduce((acc, [k, v]) => applyPatch(acc, k, v), base)
        if (row && isDeepStrictEqual(next, row.value)) {
          results[s] = {status: 'unchanged', revision: current}
          continue
        }
        const write = {section: s, value: next, origin: 'managed' as const, source: 'admin_api', updatedBy: actorOf(ctx), updatedAt: o.now()}
        const ok = row ? await tx.settingsSections.update(write, current) : await tx.settingsSections.insert(write)
        if (!ok) throw new AppError('revision_conflict', `settings section ${s} was changed by another writer; load it again and retry`, {section: s, expected: current, applied: []})
        results[s] = {status: 'saved', revision: current + 1}
        applied.push(s)
      }
    })
    await o.afterWrite(applied)
    return results
  }

  /** What is wrong with the JSON type of `v` for a leaf `node` ("expected a string, found the number 0"), or null. */
  function wrongJsonType(node: {kind: string}, v: unknown): string | null {
    const want = {string: 'string', int: 'number', float: 'number', bool: 'boolean'}[node.kind]
    if (!want || typeof v === want) return null
    const found = Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `the ${typeof v} ${JSON.stringify(v)}`
    return `expected ${expectedOf(node as never)}, found ${found}`
  }

  async function save(ctx: CallContext, body: unknown): Promise<SaveResult> {
    if (!isObj(body)) throw new AppError('invalid_request', 'the request body must be a JSON object of settings')
    const revisions = body.revisions ?? {}
    if (!isObj(revisions) || Object.values(revisions).some((v) => !Number.isInteger(v))) throw new AppError('validation_failed', 'revisions: expected {<section>: <revision>}', {sections: {}})
    const settings = Object.fromEntries(Object.entries(body).filter(([k]) => !META_KEYS.has(k)))
    if (!Object.keys(settings).length) throw new AppError('invalid_request', 'the request body has no settings; send the changed fields')
    const sent = flatten(settings)
    const cur = viewFlat()

    const layer1: Record<string, Tree> = {}
    const fileEdits: Array<[string, unknown]> = []
    const bad = {hubOwned: [] as string[], layer0: [] as string[], unclassified: [] as string[], unpersisted: [] as string[]}
    // JSON carries types, so a value must have its key's type as sent: the file loader's
    // leniency (a number where a string is expected, as YAML writes `cpu: 0.5`) is not for saves.
    const typeIssues: Record<string, Array<{key: string; message: string}>> = {}
    const fileTypeIssues: Array<{key: string; message: string}> = []
    for (const [k, v] of Object.entries(sent)) {
      const node = nodeAt(k.split('.'))
      const wrong = v === null || !node ? null : wrongJsonType(node, v)
      const cls = classOf(k)
      if (wrong && cls?.layer === 1) (typeIssues[cls.section] ??= []).push({key: k, message: wrong})
      else if (wrong) fileTypeIssues.push({key: k, message: wrong})
    }
    for (const [k, v] of Object.entries(sent)) {
      const node = nodeAt(k.split('.'))
      if (isObj(v) && !Object.keys(v).length && (!node || node.kind === 'object')) continue
      // A mapping is a patch (only changed fields): compare what it would make of the value.
      const current = valueAt(cur, k)
      if (same(k, isObj(v) ? mergePatch(current, v) : v, current)) continue
      const cls = classOf(k)
      if (HUB_OWNED_KEYS.has(k)) bad.hubOwned.push(k)
      else if (!knownKey(k)) bad.unclassified.push(k)
      else if (READ_ONLY_KEYS.has(k)) bad.unpersisted.push(k)
      else if (cls?.layer === 1) layer1[cls.section] = {...(layer1[cls.section] ?? {}), [k]: v}
      else if (!workstation) (cls ? bad.layer0 : bad.unpersisted).push(k)
      else fileEdits.push([k, v])
    }
    if (bad.hubOwned.length) throw reject('hub_owned_keys_rejected', 'the Hub writes these keys itself; send them unchanged or leave them out', bad.hubOwned)
    if (bad.layer0.length) throw reject('layer0_rejected', 'bootstrap (Layer-0) keys cannot be changed through the API on a hosted Hub; change the deployment configuration', bad.layer0)
    if (bad.unclassified.length) throw reject('unclassified_keys_rejected', 'unknown settings keys', bad.unclassified)
    if (bad.unpersisted.length) throw reject('unpersisted_keys_rejected', 'this Hub cannot store these keys anywhere', bad.unpersisted)
    const mode = fileEdits.find(([k]) => k === 'server.mode')
    if (mode && mode[1] !== null && !MODES.includes(mode[1] as string)) {
      throw new AppError('invalid_request', `server.mode: expected workstation or hosted (production is the legacy name of hosted), found ${JSON.stringify(mode[1])}`, {key: 'server.mode'})
    }

    const next = Object.fromEntries(Object.entries(layer1).map(([s, units]) => [s, Object.entries(units).reduce((acc, [k, v]) => applyPatch(acc, k, v), o.effectiveOf(s))]))
    validateSections(next, o.deps.cloudIdentity)
    if (Object.keys(typeIssues).length) {
      const summary = Object.values(typeIssues).flat().map((i) => `${i.key}: ${i.message}`).join('; ')
      throw new AppError('validation_failed', `invalid settings: ${summary}`, {sections: typeIssues})
    }
    if (fileTypeIssues.length) throw reject('unsaved_keys_rejected', 'these fields would not load as sent', fileTypeIssues.map((i) => i.key), {issues: fileTypeIssues})
    const notices: string[] = []
    for (const s of Object.keys(layer1)) {
      if (o.rowOf(s)?.origin !== 'managed' && !isDeepStrictEqual(next[s], o.seedOf(s))) {
        notices.push(`section ${s} is now managed in the database: its bootstrap value (settings file or environment) no longer applies until the section is reset`)
      }
    }
    const numericRevisions = revisions as Record<string, number>

    if (!workstation) {
      const sections = await writeSections(ctx, layer1, numericRevisions)
      return {sections, applied: Object.keys(sections).filter((s) => sections[s].status === 'saved'), notices}
    }

    const ignored = fileEdits.filter(([k]) => WORKSTATION_FORCED.has(k) || bootstrap.origins[k] === 'env').map(([k]) => k)
    const edits = fileEdits.filter(([k]) => !ignored.includes(k))
    if (ignored.length) notices.push(`ignored (overridden at every start or by the environment, no effect in the file): ${ignored.join(', ')}`)
    const file = settingsFile()

    return withSettingsLock(file, async () => {
      let before: string | null = null
      try {
        before = readFileSync(file, 'utf8')
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      }
      const text0 = before ?? 'schema_version: "1"\n'
      const data0 = (yamlToJS(parseDocument(text0)) ?? {}) as Tree
      let text = text0
      const written: string[] = []
      if (edits.length) {
        if (bootstrap.files.legacy && !('server' in data0) && edits.some(([k]) => k === 'server' || k.startsWith('server.'))) {
          throw new AppError('legacy_server_yaml', `the settings file has no server block while the deprecated server config file ${bootstrap.files.legacy} is in effect; move that file's keys under server: in ${file} first`, {legacy: bootstrap.files.legacy, file})
        }
        const list: SettingsEdit[] = []
        for (const [k, v] of edits) {
          const path = k.split('.')
          // Rule 4: creating a cors block without `enabled` also writes its current value (missing block: on).
          const cors = ['server.hub.cors', 'server.broker.cors'].find((b) => k.startsWith(b + '.') || k === b)
          if (cors && v !== null && getIn(data0, cors.split('.')) === undefined && !edits.some(([e]) => e === cors + '.enabled') && !(k === cors && isObj(v) && 'enabled' in v)) {
            list.push({path: [...cors.split('.'), 'enabled'], value: true})
          }
          // A mapping is merged into the file's block leaf by leaf: siblings and comments stay.
          list.push(...mergeEdits(path, getIn(data0, path), v))
          // Rule 5: null on a block holding the Hub-owned keys keeps them.
          if (v === null) {
            for (const owned of HUB_OWNED_KEYS) {
              const keep = getIn(data0, owned.split('.'))
              if (owned.startsWith(k + '.') && keep !== undefined) list.push({path: owned.split('.'), value: keep})
            }
          }
          written.push(k)
        }
        text = editSettingsText(text0, list)
        // A field that would not load as sent is refused and nothing is saved.
        const checked = validateSettingsText(file, text)
        const unsaved = new Set<string>()
        for (const i of checked.issues) {
          if (i.severity !== 'error') continue
          const hit = written.find((k) => i.key === k || i.key.startsWith(k + '.') || k.startsWith(i.key + '.'))
          if (hit) unsaved.add(hit)
        }
        const data1 = (yamlToJS(parseDocument(text)) ?? {}) as Tree
        for (const [k, v] of edits) {
          const path = k.split('.')
          if (v !== null && !isDeepStrictEqual(getIn(data1, path), mergePatch(getIn(data0, path), v))) unsaved.add(k)
        }
        if (unsaved.size) throw reject('unsaved_keys_rejected', 'these fields would not load as sent', [...unsaved], {issues: checked.issues.filter((i) => i.severity === 'error').map((i) => ({key: i.key, message: i.message}))})
      }

      const sections = await writeSections(ctx, layer1, numericRevisions)
      const applied = Object.keys(sections).filter((s) => sections[s].status === 'saved')
      if (text !== text0) {
        try {
          fileWriter.write(realTarget(file), text)
        } catch (err) {
          o.deps.logger.error({err, file, applied}, 'settings file write failed after the database was saved')
          throw new AppError('settings_file_write_failed', `the database sections were saved but writing ${file} failed: ${(err as Error).message}`, {applied, sections, file_keys: written})
        }
        for (const [k, v] of edits) {
          fileFlat = applyPatch(fileFlat, k, v)
          if (v === null) delete fileFlat[k]
        }
        fileFlat = flatten(unflatten(fileFlat))
        if (written.includes('server.log_level') && bootstrap.origins['server.log_level'] !== 'env' && !o.deps.env.SVC_LOG_LEVEL) {
          const level = edits.find(([k]) => k === 'server.log_level')![1]
          o.deps.setLogLevel?.(typeof level === 'string' ? level : String(SERVER_KEYS['server.log_level'].default))
        }
      }
      const fileKeys = text !== text0 ? written : []
      return {
        sections,
        applied,
        file_keys: fileKeys,
        reload: {requires_restart: fileKeys.some((k) => k !== 'server.log_level' && (k === 'server' || k.startsWith('server.') || k.startsWith('artifacts.')))},
        ...(ignored.length && {ignored_keys: ignored}),
        notices,
      }
    })
  }

  /**
   * Save rule 5: the Hub records its co-located broker's identity as `server.broker.broker_id`
   * and `broker_token`. GET shows them (the token masked) on every Hub; a workstation Hub also
   * writes them into its settings file, under the settings lock, only when they differ, keeping
   * comments and order. A new file is created 0600: it holds the broker's secret.
   */
  async function recordHubOwned(values: Record<string, string>): Promise<void> {
    for (const [k, v] of Object.entries(values)) fileFlat = applyFlat(fileFlat, k, v)
    if (!workstation) return
    const file = settingsFile()
    await withSettingsLock(file, () => {
      let before: string | null = null
      try {
        before = readFileSync(file, 'utf8')
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      }
      const text0 = before ?? 'schema_version: "1"\n'
      const data0 = (parseDocument(text0).toJS({maxAliasCount: -1}) ?? {}) as Tree
      // A legacy server.yaml in effect holds the server block: a new one here would hide it.
      if (bootstrap.files.legacy && !('server' in data0)) return
      const edits = Object.entries(values).filter(([k, v]) => getIn(data0, k.split('.')) !== v).map(([k, v]) => ({path: k.split('.'), value: v}))
      if (!edits.length) return
      fileWriter.write(realTarget(file), editSettingsText(text0, edits), 0o600)
    })
  }

  return {viewFlat, save, writeSections, recordHubOwned}
}
