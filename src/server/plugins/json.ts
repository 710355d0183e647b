const POISON = /"(?:__proto__|constructor)"\s*:/

/**
 * JSON.parse that drops `__proto__` keys (prototype poisoning). The reviver costs a call per
 * value, so it only runs when the text could hold such a key at all.
 */
export function parseJson(text: string): unknown {
  if (!POISON.test(text)) return JSON.parse(text)
  return JSON.parse(text, (k, v) => (k === '__proto__' ? undefined : v))
}
