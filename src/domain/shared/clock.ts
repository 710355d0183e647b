/** A clock port, so tests can move time (token expiry, sign-in flow expiry). */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = {now: () => new Date()}

/** Canonical ISO-8601 UTC text with milliseconds: the stored form of every timestamp. */
export const iso = (d: Date) => d.toISOString()

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
