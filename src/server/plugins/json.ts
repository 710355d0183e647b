import {AppError} from '../../api/app-error.js'

const POISON = /"(?:__proto__|constructor)"\s*:/

/** Deepest nesting of objects and arrays a JSON body may have (documented in docs/api.md). */
export const MAX_JSON_DEPTH = 64

/**
 * Whether JSON text nests objects/arrays deeper than `max`. One pass over the characters with a
 * counter, no recursion and no parse: it runs before anything that walks the value recursively
 * (schema validation, the raw-field scan, JSON.stringify on write), so a body nested 100,000
 * deep is refused instead of overflowing the stack. Brackets inside strings do not count.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/** The 400 for a body nested deeper than MAX_JSON_DEPTH. */
export function tooDeep(): AppError {
  return new AppError('validation_error', `invalid request: body is nested deeper than ${MAX_JSON_DEPTH} levels`, {
    fields: [{path: 'body', message: `is nested deeper than ${MAX_JSON_DEPTH} levels`}],
    maxDepth: MAX_JSON_DEPTH,
  })
}

/**
 * JSON.parse that drops `__proto__` keys (prototype poisoning) and refuses text nested deeper
 * than MAX_JSON_DEPTH with `tooDeep()` (an AppError; any other throw is a syntax error). The
 * reviver costs a call per value, so it only runs when the text could hold such a key at all.
 */
export function parseJson(text: string): unknown {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep()
  if (!POISON.test(text)) return JSON.parse(text)
  return JSON.parse(text, (k, v) => (k === '__proto__' ? undefined : v))
}
