import {mergePatch} from '../../config/merge-patch.js'
import {classifyKey, KEY_CLASS_RULES, type KeyClass} from '../../config/key-classes.js'
import {nodeAt, schemaRows} from '../../config/schema/walk.js'

export type Tree = Record<string, unknown>
export const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Every Layer-1 section name, in table order. */
export const SECTIONS: readonly string[] = [...new Set(KEY_CLASS_RULES.flatMap((r) => (r.cls.layer === 1 ? [r.cls.section] : [])))]

/** Sections that live in the database only: never seeded from bootstrap (spec "Additional settings"). */
export const DATABASE_ONLY_SECTIONS = new Set(['profiling'])

/**
 * Keys every Hub shows but never saves or applies from its settings database (spec: Default
 * Agent Role, Default Maximum Agent Role, Default Harness Auth). Changing one is 422
 * `unpersisted_keys_rejected`.
 */
export const READ_ONLY_KEYS = new Set(['default_agent_role', 'default_max_agent_role', 'default_harness_auth'])

/** Keys the Hub writes itself (save rule 5). */
export const HUB_OWNED_KEYS = new Set(['server.broker.broker_id', 'server.broker.broker_token'])

/** Workstation fields forced at every start (save rule 6): a save has no effect on them. */
export const WORKSTATION_FORCED = new Set(['server.broker.enabled', 'server.broker.host', 'server.hub.host', 'server.auth.dev_mode', 'server.storage.provider', 'server.secrets.backend'])

/** Keys of a PUT body or GET answer that are not settings. */
export const META_KEYS = new Set(['mode', 'layer0_editable', 'env_overrides', 'sections', 'revisions'])

/**
 * Whether a path is a "unit": a value stored under one flat key. Lists, scalars, map-typed
 * blocks (runtimes, profiles, harness_configs, env maps) and top-level `default_*` keys are
 * units; plain blocks are descended into. A map's own keys may hold dots (`telemetry.resource`
 * attributes), which is why a map is never flattened; a save still merges into it (applyPatch).
 */
function isUnit(path: string[], value: unknown): boolean {
  if (!isObj(value) || Object.keys(value).length === 0) return true
  if (path.length === 1 && path[0].startsWith('default_')) return true
  const node = nodeAt(path)
  return node !== undefined && node.kind !== 'object'
}

/** A tree as unit keys: `{server: {hub: {port: 1}}}` -> `{'server.hub.port': 1}`. */
export function flatten(tree: unknown, prefix: string[] = [], out: Tree = {}): Tree {
  if (!isObj(tree)) return out
  for (const [k, v] of Object.entries(tree)) {
    const path = [...prefix, k]
    if (isUnit(path, v)) out[path.join('.')] = v
    else flatten(v, path, out)
  }
  return out
}

/** The layer class of a unit key (top-level `default_*` blocks count as agent defaults). */
export function classOf(key: string): KeyClass | null {
  const c = classifyKey(key)
  if (c) return c
  const top = key.split('.')[0]
  return top.startsWith('default_') ? classifyKey(top) : null
}

export const sectionOf = (key: string): string | null => {
  const c = classOf(key)
  return c?.layer === 1 ? c.section : null
}

let codedDefaults: Tree | null = null

/**
 * Defaults written in the settings schema for Layer-1 keys (`quotas.enforce_broker_quotas:
 * true`, `agent_secrets.user_scope_only: false`, ...), as unit keys. GET server-config shows
 * them where nothing sets the key, so the view is the effective value the Hub applies. Keys
 * under a block that does not materialise its defaults, map entries and read-only keys are left out.
 */
export function layer1Defaults(): Tree {
  if (codedDefaults) return codedDefaults
  const out: Tree = {}
  for (const {key, node} of schemaRows()) {
    if (key.includes('<') || key.includes('[]') || node.kind === 'object' || node.kind === 'map' || node.default === undefined) continue
    if (!sectionOf(key) || READ_ONLY_KEYS.has(key)) continue
    const path = key.split('.')
    const hidden = path.slice(0, -1).some((_, i) => {
      const parent = nodeAt(path.slice(0, i + 1))
      return parent?.kind === 'object' && parent.materialize === false
    })
    if (!hidden) out[key] = node.default
  }
  codedDefaults = out
  return out
}

/** True when the settings schema knows the key (or it sits under an open block). */
export const knownKey = (key: string) => nodeAt(key.split('.')) !== undefined || classOf(key) !== null

export function setIn(tree: Tree, path: readonly string[], value: unknown) {
  let cur = tree
  for (const seg of path.slice(0, -1)) {
    if (!isObj(cur[seg])) cur[seg] = {}
    cur = cur[seg] as Tree
  }
  cur[path[path.length - 1]] = value
}

export function getIn(tree: unknown, path: readonly string[]): unknown {
  let cur = tree
  for (const seg of path) {
    if (!isObj(cur)) return undefined
    cur = cur[seg]
  }
  return cur
}

export function deleteIn(tree: Tree, path: readonly string[]) {
  const parent = getIn(tree, path.slice(0, -1))
  if (isObj(parent)) delete parent[path[path.length - 1]]
}

/**
 * Applies one unit edit to a flat section value: the key replaces itself, any key below it and
 * any key above it (a block cleared earlier), so the flat map never holds overlapping keys.
 */
export function applyFlat(flat: Tree, key: string, value: unknown): Tree {
  const out: Tree = {}
  for (const [k, v] of Object.entries(flat)) if (k !== key && !k.startsWith(key + '.') && !key.startsWith(k + '.')) out[k] = v
  out[key] = value
  return out
}

/**
 * The value of a unit key in a flat section value: the key itself, else inside a block stored
 * above it, else the block assembled from keys stored below it; undefined when none is there.
 */
export function valueAt(flat: Tree, key: string): unknown {
  if (key in flat) return flat[key]
  const above = Object.keys(flat).find((k) => key.startsWith(k + '.'))
  if (above !== undefined) return getIn(flat[above], key.slice(above.length + 1).split('.'))
  const below = Object.entries(flat).filter(([k]) => k.startsWith(key + '.'))
  return below.length ? getIn(unflatten(Object.fromEntries(below)), key.split('.')) : undefined
}

/**
 * Applies one sent unit to a flat section value the way every save does (see mergePatch): a
 * mapping is merged into what the key holds, so a body carrying one entry of a map (a harness
 * config, a runtime, an env variable) keeps the others; null inside it removes that entry; null,
 * a list or a scalar replaces the unit (applyFlat).
 */
export function applyPatch(flat: Tree, key: string, value: unknown): Tree {
  return applyFlat(flat, key, isObj(value) ? mergePatch(valueAt(flat, key), value) : value)
}

/** Builds a tree from flat keys, shorter keys first so deeper keys land inside their blocks. */
export function unflatten(flat: Tree, into: Tree = {}): Tree {
  for (const k of Object.keys(flat).sort((a, b) => a.split('.').length - b.split('.').length)) {
    const path = k.split('.')
    if (flat[k] === null && path.length > 1) {
      // A cleared key: present as null so the view shows it cleared.
      setIn(into, path, null)
    } else setIn(into, path, structuredClone(flat[k]))
  }
  return into
}
