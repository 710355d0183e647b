/**
 * The secrets an agent's harness needs, and which of them nobody has provided. A need comes from
 * the harness's auth type (`auth_selected_type`, else its default: `ANTHROPIC_API_KEY` for
 * Claude Code's API key, ...) and from the config's required secret entries (`secrets`). A value
 * the config's `env` already sets satisfies a need; so does a project secret or the creating
 * user's own secret of the project.
 */
import {AppError} from '../../api/app-error.js'
import {harnessModule} from '../../broker/harnesses/registry.js'
import type {HarnessConfigSetting} from './agent-settings.js'

export interface SecretNeed {
  key: string
  description: string
  /** `environment` (default) and `variable` reach the harness's environment; `file` is written at `target` in its HOME. */
  type: 'environment' | 'variable' | 'file'
  target?: string
}

const KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/
/** A secret that reaches the environment is a variable: its name cannot hold `.` or `-`. */
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

function entryNeed(entry: unknown, where: string): SecretNeed {
  if (typeof entry === 'string') return entryNeed({key: entry}, where)
  const e = (entry ?? {}) as Record<string, unknown>
  if (typeof e.key !== 'string' || !KEY.test(e.key)) throw new AppError('validation_error', `${where}: a required secret needs a \`key\` (letters, digits, _ . -)`)
  const type = e.type === undefined ? 'environment' : e.type
  if (type !== 'environment' && type !== 'variable' && type !== 'file') throw new AppError('validation_error', `${where}: secret ${e.key} has type ${JSON.stringify(type)}; expected environment, variable or file`)
  if (type === 'file' && typeof e.target !== 'string') throw new AppError('validation_error', `${where}: secret ${e.key} of type file needs a \`target\` path`)
  if (type !== 'file' && !ENV_KEY.test(e.key)) throw new AppError('validation_error', `${where}: secret ${e.key} reaches the harness's environment, so its key must be a variable name (letters, digits and _, not starting with a digit); only a secret of type file may use . or -`)
  return {key: e.key, description: typeof e.description === 'string' ? e.description : '', type, ...(type === 'file' && {target: e.target as string})}
}

/** Every secret the config needs, its auth type's first. Throws validation_error for an unknown auth type. */
export function secretNeeds(configName: string, cfg: HarnessConfigSetting): SecretNeed[] {
  const mod = harnessModule(cfg.harness)
  const needs = new Map<string, SecretNeed>()
  if (mod) {
    const authType = typeof cfg.auth_selected_type === 'string' && cfg.auth_selected_type ? cfg.auth_selected_type : mod.auth.default
    const auth = mod.auth.types[authType]
    if (!auth) {
      throw new AppError('validation_error', `harness config ${configName}: auth_selected_type ${JSON.stringify(authType)} is not one of ${Object.keys(mod.auth.types).join(', ')}`, {
        fields: [{path: 'harnessConfig', message: `unknown auth type ${authType}`}],
      })
    }
    for (const key of auth.secrets) needs.set(key, {key, description: auth.description, type: 'environment'})
  }
  const entries = Array.isArray(cfg.secrets) ? cfg.secrets : []
  for (const entry of entries) {
    const need = entryNeed(entry, `harness config ${configName}`)
    needs.set(need.key, need)
  }
  return [...needs.values()]
}

/** The needs neither the config's env nor an available secret satisfies. */
export function missingNeeds(needs: SecretNeed[], cfg: HarnessConfigSetting, available: ReadonlySet<string>): SecretNeed[] {
  const env = (cfg.env ?? {}) as Record<string, unknown>
  return needs.filter((n) => !(n.type !== 'file' && typeof env[n.key] === 'string' && env[n.key] !== '') && !available.has(n.key))
}
