import {assertReadable, loadSettings, type LoadedSettings} from './settings-loader.js'

export {findProjectDir, findProjectSettings} from './project-files.js'

/** What the CLI reads from the settings files, after environment overrides. */
export interface CliSettings {
  autohelp: boolean
  interactiveDisabled: boolean
  hubEndpoint: string | null
  groveId: string | null
  /** Files that were read, in merge order. */
  files: string[]
  /** The whole effective settings (values with origins, problems, active profile). */
  loaded?: LoadedSettings
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

/**
 * Reads the settings the CLI needs through the settings loader: global then project file (later
 * wins), then `SVC_CLI_AUTOHELP`, `SVC_HUB_ENDPOINT`, `SVC_HUB_GROVE_ID`. An invalid value
 * falls back to the layer below (`svc config validate` names it); a file that cannot be parsed
 * at all is `config_invalid` with its file:line, since running as if it were empty would use the
 * wrong Hub or project. YAML is only loaded when a file exists.
 */
export async function loadCliSettings(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): Promise<CliSettings> {
  const loaded = await loadSettings({cwd, env})
  assertReadable(loaded)
  const cli = (loaded.tree.cli ?? {}) as Record<string, unknown>
  const hub = (loaded.tree.hub ?? {}) as Record<string, unknown>
  return {
    autohelp: cli.autohelp !== false,
    interactiveDisabled: cli.interactive_disabled === true,
    hubEndpoint: str(hub.endpoint),
    groveId: str(hub.grove_id),
    files: loaded.files.filter((f) => f.parsed).map((f) => f.path),
    loaded,
  }
}
