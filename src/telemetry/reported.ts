import type {Attributes, TelemetryEvent} from './filter.js'

/** Most events one report may carry (a broker's or agent's batch); the rest are ignored. */
export const MAX_REPORTED_EVENTS = 1000
const MAX_TYPE = 200
const MAX_ATTRIBUTES = 128
const MAX_VALUE = 8192

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Events as a broker (tunnel) or agent (HTTP) reported them, made safe to export: a string type,
 * a time (now when missing or not a number), scalar attributes only (strings cut to 8 KiB, at
 * most 128). Anything else is left out rather than refused: telemetry never fails a report.
 */
export function sanitizeReported(raw: unknown, now: number): TelemetryEvent[] {
  if (!Array.isArray(raw)) return []
  const out: TelemetryEvent[] = []
  for (const e of raw.slice(0, MAX_REPORTED_EVENTS)) {
    if (!isObj(e) || typeof e.type !== 'string' || !e.type || e.type.length > MAX_TYPE) continue
    const attributes: Attributes = {}
    for (const [k, v] of Object.entries(isObj(e.attributes) ? e.attributes : {}).slice(0, MAX_ATTRIBUTES)) {
      if (typeof v === 'string') attributes[k] = v.length > MAX_VALUE ? v.slice(0, MAX_VALUE) : v
      else if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') attributes[k] = v
    }
    out.push({type: e.type, time: typeof e.time === 'number' && Number.isFinite(e.time) ? e.time : now, attributes})
  }
  return out
}
