import {AppError} from '../api/app-error.js'
import {PROJECT_SETTINGS, type ProjectSettingDef} from '../domain/project-settings/registry.js'

/** A setting named as `defaultMaxTurns`, `svc/default-max-turns` or `default-max-turns`. */
export function settingDef(name: string): ProjectSettingDef {
  const n = name.replace(/^svc\//, '')
  const def = PROJECT_SETTINGS.find((d) => d.field === name || d.key === name || d.key === `svc/${n}`)
  if (!def) throw new AppError('usage_error', `unknown project setting "${name}"; known: ${PROJECT_SETTINGS.map((d) => d.key.slice(4)).join(', ')}`)
  return def
}

/** Turns a command-line value into the API value: numbers for counts, JSON for resources. */
export function cliValue(def: ProjectSettingDef, raw: string): unknown {
  if (def.field === 'defaultMaxTurns' || def.field === 'defaultMaxModelCalls') {
    if (!/^\d+$/.test(raw)) throw new AppError('usage_error', `${def.key.slice(4)}: expected a whole number, found "${raw}"`)
    return Number(raw)
  }
  if (def.field === 'defaultResources') {
    try {
      return JSON.parse(raw)
    } catch {
      throw new AppError('usage_error', `${def.key.slice(4)}: expected JSON such as '{"cpu":"2","memory":"4Gi"}'`)
    }
  }
  return raw
}
