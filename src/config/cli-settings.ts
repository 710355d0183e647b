import {existsSync, readFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {paths} from './paths.js'

/** What the CLI reads from the settings files, after environment overrides. */
export interface CliSettings {
  autohelp: boolean
  interactiveDisabled: boolean
  hubEndpoint: string | null
  groveId: string | null
  /** Files that were read, in merge order. */
  files: string[]
}

/**
 * The project settings file of the checkout containing `cwd`: the nearest `.svc/settings.yaml`
 * walking up, never the per-user home's own `.svc/settings.yaml` (that one is global).
 */
export function findProjectSettings(cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const globalFile = paths(env).globalSettings
  let dir = resolve(cwd)
  for (;;) {
    const candidate = join(dir, '.svc', 'settings.yaml')
    if (candidate !== globalFile && existsSync(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}

function bool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v
  if (typeof v === 'string') {
    if (/^(true|1|yes|on)$/i.test(v)) return true
    if (/^(false|0|no|off)$/i.test(v)) return false
  }
  return undefined
}

/**
 * Reads `cli.*` and `hub.*` from the global then the project settings file (later wins), then
 * `SVC_CLI_AUTOHELP`, `SVC_HUB_ENDPOINT`, `SVC_HUB_GROVE_ID`. A file that cannot be parsed is
 * skipped here (commands must still run to report it); `svc config validate` names the problem.
 */
export async function loadCliSettings(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): Promise<CliSettings> {
  const out: CliSettings = {autohelp: true, interactiveDisabled: false, hubEndpoint: null, groveId: null, files: []}
  const files = [paths(env).globalSettings, findProjectSettings(cwd, env)].filter((f): f is string => !!f && existsSync(f))
  if (files.length) {
    const {parse} = await import('yaml')
    for (const file of files) {
      let data: Record<string, any> | null
      try {
        data = parse(readFileSync(file, 'utf8'))
      } catch {
        continue
      }
      if (!data || typeof data !== 'object') continue
      out.files.push(file)
      const cli = data.cli ?? {}
      const hub = data.hub ?? {}
      out.autohelp = bool(cli.autohelp) ?? out.autohelp
      out.interactiveDisabled = bool(cli.interactive_disabled) ?? out.interactiveDisabled
      if (typeof hub.endpoint === 'string' && hub.endpoint) out.hubEndpoint = hub.endpoint
      if (typeof hub.grove_id === 'string' && hub.grove_id) out.groveId = hub.grove_id
    }
  }
  out.autohelp = bool(env.SVC_CLI_AUTOHELP) ?? out.autohelp
  if (env.SVC_HUB_ENDPOINT) out.hubEndpoint = env.SVC_HUB_ENDPOINT
  if (env.SVC_HUB_GROVE_ID) out.groveId = env.SVC_HUB_GROVE_ID
  return out
}
