/**
 * The `detail` of an `executing` report, the same for every harness: the tool's name, then a
 * one-line summary of what it does (`Bash: npm test`), at most DETAIL_MAX characters. Each
 * module decides the summary of its own tools.
 */
export const DETAIL_MAX = 200

/** `text` on one line (runs of whitespace become one space), cut to `max` with an ellipsis. */
export function clipLine(text: string, max = DETAIL_MAX): string {
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length > max ? `${one.slice(0, max - 1)}…` : one
}

/** `tool: summary`, or the tool's name alone without a summary. */
export function toolDetail(tool: unknown, summary: string): string {
  const name = typeof tool === 'string' && tool ? tool : 'tool'
  const s = clipLine(summary)
  return clipLine(s ? `${name}: ${s}` : name)
}

/** The first non-empty string value of a tool's input: the fallback summary of an unknown tool. */
export function firstString(input: unknown): string {
  if (typeof input !== 'object' || input === null) return ''
  return Object.values(input).find((v): v is string => typeof v === 'string' && v.length > 0) ?? ''
}
