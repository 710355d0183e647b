import {PROJECT_SETTINGS, type ProjectSettingDef} from './registry.js'

/** Coded defaults: the last layer, used when neither request, project nor hub sets a value. */
export const CODED_DEFAULTS: Record<string, unknown> = {
  defaultHarnessConfig: 'shell',
  defaultAgentRole: 'full',
  defaultResources: {cpu: '1', memory: '2Gi', disk: '10Gi', gpu: 0},
}

export type Layer = 'request' | 'project' | 'hub' | 'coded' | 'none'

export interface Resolved {
  value: unknown
  from: Layer
}

const present = (v: unknown) => v !== undefined && v !== null && v !== ''

/**
 * The effective value of every registered setting for a new agent: the request, then the
 * project annotation, then the hub default, then the coded default. Resources merge by key in
 * the same order (a request's cpu over a project's memory over the coded disk). Pure: unit-
 * tested as a table.
 */
export function resolveAgentDefaults(layers: {
  request: Record<string, unknown>
  project: Record<string, string>
  hub: Record<string, unknown>
}): Record<string, Resolved> {
  const out: Record<string, Resolved> = {}
  for (const def of PROJECT_SETTINGS) out[def.field] = resolveOne(def, layers)
  return out
}

function fromProject(def: ProjectSettingDef, project: Record<string, string>): unknown {
  const raw = project[def.key]
  if (raw === undefined) return undefined
  try {
    return def.parse(raw)
  } catch {
    // A stored value that no longer parses is ignored rather than breaking agent creation.
    return undefined
  }
}

function resolveOne(def: ProjectSettingDef, layers: {request: Record<string, unknown>; project: Record<string, string>; hub: Record<string, unknown>}): Resolved {
  const candidates: Array<[Layer, unknown]> = [
    ['request', layers.request[def.field]],
    ['project', fromProject(def, layers.project)],
    ['hub', layers.hub[def.hubKey]],
    ['coded', CODED_DEFAULTS[def.field]],
  ]
  if (def.field === 'defaultResources') {
    const merged: Record<string, unknown> = {}
    let from: Layer = 'none'
    for (const [layer, v] of [...candidates].reverse()) {
      if (v && typeof v === 'object') {
        Object.assign(merged, v)
        from = layer
      }
    }
    return {value: Object.keys(merged).length ? merged : null, from}
  }
  for (const [layer, v] of candidates) if (present(v)) return {value: v, from: layer}
  return {value: null, from: 'none'}
}
