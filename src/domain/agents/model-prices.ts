/**
 * List prices in US dollars per million tokens, used only when a harness reports tokens without
 * a cost. Approximate public list prices (November 2026); a model matches the longest prefix.
 * Cache reads and writes default to 10% and 125% of the input price where a provider has no
 * separate price. Unknown models cost 0 and are marked `unpriced`.
 */
export interface ModelPrice {
  input: number
  output: number
  cacheRead?: number
  cacheWrite?: number
}

export const MODEL_PRICES: Record<string, ModelPrice> = {
  'claude-opus-4': {input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75},
  'claude-opus-4-5': {input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25},
  'claude-sonnet-4': {input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75},
  'claude-3-7-sonnet': {input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75},
  'claude-haiku-4': {input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25},
  'claude-3-5-haiku': {input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1},
  'gpt-5': {input: 1.25, output: 10, cacheRead: 0.125},
  'gpt-5-mini': {input: 0.25, output: 2, cacheRead: 0.025},
  'gpt-5-codex': {input: 1.25, output: 10, cacheRead: 0.125},
  'gpt-4.1': {input: 2, output: 8, cacheRead: 0.5},
  'gpt-4o': {input: 2.5, output: 10, cacheRead: 1.25},
  o3: {input: 2, output: 8, cacheRead: 0.5},
  'o4-mini': {input: 1.1, output: 4.4, cacheRead: 0.275},
  'gemini-2.5-pro': {input: 1.25, output: 10, cacheRead: 0.31},
  'gemini-2.5-flash': {input: 0.3, output: 2.5, cacheRead: 0.075},
  'gemini-3-pro': {input: 2, output: 12, cacheRead: 0.2},
}

/** The price of `model` (longest matching prefix; a provider prefix such as `anthropic/` is ignored). */
export function priceOf(model: string | undefined): ModelPrice | null {
  if (!model) return null
  const m = model.toLowerCase().replace(/^[a-z0-9-]+\//, '')
  let best: string | null = null
  for (const k of Object.keys(MODEL_PRICES)) if (m.startsWith(k) && (!best || k.length > best.length)) best = k
  return best ? MODEL_PRICES[best] : null
}

/** Cost in US dollars of the given tokens at `price`. */
export function costOf(price: ModelPrice, t: {inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number}): number {
  const perToken = (usdPerM: number) => usdPerM / 1_000_000
  const usd =
    t.inputTokens * perToken(price.input) +
    t.outputTokens * perToken(price.output) +
    (t.cacheReadTokens ?? 0) * perToken(price.cacheRead ?? price.input * 0.1) +
    (t.cacheWriteTokens ?? 0) * perToken(price.cacheWrite ?? price.input * 1.25)
  return Math.round(usd * 1e6) / 1e6
}
