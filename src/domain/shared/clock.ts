/** A clock port, so tests can move time (token expiry, sign-in flow expiry). */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = {now: () => new Date()}

// The text of the second last formatted ("2026-11-28T03:40:12."), and that second.
let isoSecond = NaN
let isoPrefix = ''
const MS = ['00', '0', ''] as const

/**
 * Canonical ISO-8601 UTC text with milliseconds: the stored form of every timestamp, exactly
 * `toISOString()`. Date's formatter costs ~0.5 us a call (it goes through snprintf), and the
 * status path stamps every batch and report with it: within one second only the milliseconds
 * change, so the rest is kept from the last call. Dates before 1970 (and invalid ones, which
 * throw) take toISOString every time.
 */
export function iso(d: Date): string {
  const t = d.getTime()
  const second = Math.floor(t / 1000)
  if (second !== isoSecond || !(t >= 0)) {
    const text = d.toISOString()
    if (!(t >= 0)) return text
    isoSecond = second
    isoPrefix = text.slice(0, text.length - 4)
    return text
  }
  const ms = t - second * 1000
  return `${isoPrefix}${MS[String(ms).length - 1]}${ms}Z`
}

const UNITS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000}

/** Parses Go-style durations used in settings ("45m", "2h", "1h30m", "500ms"). */
export function parseDuration(text: string): number | null {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy
  let total = 0
  let matched = 0
  let m: RegExpExecArray | null
  while ((m = re.exec(text))) {
    total += Number(m[1]) * UNITS[m[2]]
    matched += m[0].length
  }
  return matched === text.length && text.length > 0 ? total : null
}
