import type {EffectiveValue} from '../config/settings-loader.js'

/** A setting's value on one line: strings as they are (`""` when empty), anything else as JSON. */
export function formatValue(v: unknown): string {
  if (typeof v === 'string') return v === '' ? '""' : v
  return JSON.stringify(v)
}

/** `default`, `global:12`, `project:3`, `environment (SVC_HUB_ENDPOINT)`. */
export function originLabel(v: EffectiveValue): string {
  if (v.origin === 'environment') return `environment (${v.variable})`
  if (v.origin === 'global' || v.origin === 'project') return v.line ? `${v.origin}:${v.line}` : v.origin
  return v.origin
}
