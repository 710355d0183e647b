import {isDeepStrictEqual} from 'node:util'
import type {SettingsEdit} from './settings-editor.js'

type Tree = Record<string, unknown>
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * How every settings save combines what it sends with what is there (JSON Merge Patch, RFC 7396):
 * a mapping is merged key by key, recursively; null removes a key; a list or a scalar replaces
 * the value whole. A save therefore carries only what changed: sending one harness config (or
 * runtime, profile, header, ...) never drops its siblings. Never mutates its arguments.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch)
  const out: Tree = isObj(target) ? structuredClone(target) : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    // Own properties only, defined rather than assigned: a key named `__proto__` stays a key.
    else Object.defineProperty(out, k, {value: mergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v), enumerable: true, writable: true, configurable: true})
  }
  return out
}

/**
 * The settings-file edits that apply `patch` at `path`, where the file holds `current`: one edit
 * per changed leaf (null removes that key), so the rest of the block, and its comments, stay as
 * they are. A patch on something that is not a mapping in the file writes the merged value whole.
 */
export function mergeEdits(path: readonly string[], current: unknown, patch: unknown): SettingsEdit[] {
  if (!isObj(patch)) return isDeepStrictEqual(current, patch) ? [] : [{path: [...path], value: patch}]
  if (!isObj(current)) return [{path: [...path], value: mergePatch(current, patch)}]
  const edits: SettingsEdit[] = []
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      if (k in current) edits.push({path: [...path, k], value: null})
    } else edits.push(...mergeEdits([...path, k], Object.hasOwn(current, k) ? current[k] : undefined, v))
  }
  return edits
}
