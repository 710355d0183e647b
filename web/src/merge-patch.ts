type Tree = Record<string, unknown>
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Deep equality of JSON values, whatever the order of the keys of a mapping. */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i]))
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && same(a[k], b[k]))
  }
  return a === b
}

/**
 * The body that turns `before` into `after` under the Hub's save rule (a JSON Merge Patch: a
 * mapping merges key by key, null removes a key, lists and scalars replace): only what changed,
 * null for each entry the user removed. Undefined when nothing changed. A page that sent the
 * edited mapping whole could never remove an entry, and would write back every entry it showed.
 */
export function mergeDiff(before: unknown, after: unknown): unknown {
  if (!isObj(before) || !isObj(after)) return same(before, after) ? undefined : after
  const out: Tree = {}
  for (const k of Object.keys(before)) if (!(k in after)) out[k] = null
  for (const [k, v] of Object.entries(after)) {
    if (!(k in before)) out[k] = v
    else {
      const d = mergeDiff(before[k], v)
      if (d !== undefined) out[k] = d
    }
  }
  return Object.keys(out).length ? out : undefined
}
