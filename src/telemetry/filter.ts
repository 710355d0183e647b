import {createHash} from 'node:crypto'
import type {FilterConfig} from './config.js'

export type AttributeValue = string | number | boolean
export type Attributes = Record<string, AttributeValue>

/** One telemetry event: a Hub, broker or agent happening, exported as one span. */
export interface TelemetryEvent {
  /** Event type, for example `agent.status` or `agent.user.prompt`; the span's name. */
  type: string
  /** Epoch milliseconds. */
  time: number
  attributes: Attributes
}

/** What an attribute listed in `filter.attributes.redact` is replaced by. */
export const REDACTED = '[REDACTED]'

export const sha256Hex = (value: AttributeValue) => createHash('sha256').update(String(value)).digest('hex')

export interface FilterContext {
  /** The process runs in debug mode (`--debug`, log level debug or trace). */
  debug: boolean
  /** Uniform in [0, 1); injected so sampling is testable. */
  random: () => number
  /**
   * The event was filtered already by the process that reported it (a broker or agent): its
   * hashed values must not be hashed again and it must not be sampled twice.
   */
  reported?: boolean
}

/** Whether an event type is selected by the include and exclude lists (exact names). */
export function selected(type: string, f: FilterConfig): boolean {
  if (f.include.length > 0 && !f.include.includes(type)) return false
  return !f.exclude.includes(type)
}

/** The sampling rate of an event type: its own rate, else the default rate. */
export const samplingRate = (type: string, f: FilterConfig) => f.samplingRates[type] ?? f.samplingDefault

/** Attributes with `redact` ones replaced by the marker and `hash` ones by their SHA-256 (hex). */
export function scrub(attributes: Attributes, f: FilterConfig, hash = true): Attributes {
  const out: Attributes = {}
  for (const [k, v] of Object.entries(attributes)) {
    if (f.redact.includes(k)) out[k] = REDACTED
    else if (hash && f.hash.includes(k)) out[k] = sha256Hex(v)
    else out[k] = v
  }
  return out
}

/**
 * Applies the telemetry filter (spec: the `telemetry.filter` table) to one event: null when it is
 * not exported, else the event with its attributes scrubbed. Pure apart from `ctx.random`.
 *
 * - `filter.enabled: false`: the event passes untouched.
 * - debug mode with `respect_debug_mode`: every event type passes and nothing is sampled out,
 *   but attributes are still redacted and hashed (debugging never leaks a prompt).
 * - otherwise include/exclude, then sampling by the type's rate, then redaction and hashing.
 */
export function filterEvent(event: TelemetryEvent, f: FilterConfig, ctx: FilterContext): TelemetryEvent | null {
  if (!f.enabled) return event
  const everything = ctx.debug && f.respectDebugMode
  if (!everything) {
    if (!selected(event.type, f)) return null
    const r = samplingRate(event.type, f)
    if (!ctx.reported && r < 1 && !(r > 0 && ctx.random() < r)) return null
  }
  return {...event, attributes: scrub(event.attributes, f, !ctx.reported)}
}
