import {AppError} from '../api/app-error.js'
import type {CliSettings} from '../config/cli-settings.js'

/**
 * The project of a command: `--project`, then `SVC_HUB_GROVE_ID`, then the checkout's
 * `hub.grove_id`, then, inside an agent, its own project (`SVC_PROJECT_ID`).
 */
export function projectOf(flag: string | undefined, settings: CliSettings, env: NodeJS.ProcessEnv = process.env): string {
  const id = flag || settings.groveId || env.SVC_PROJECT_ID
  if (!id) throw new AppError('usage_error', 'no project: pass --project, set SVC_HUB_GROVE_ID, or set hub.grove_id in .svc/settings.yaml')
  return id
}

/** Project slug a workstation Hub creates for its dev user, used when nothing names a project. */
export const DEFAULT_PROJECT = 'default'

/** Like `projectOf`, falling back to the workstation's `default` project (agent commands). */
export function projectOrDefault(flag: string | undefined, settings: CliSettings, env: NodeJS.ProcessEnv = process.env): string {
  return flag || settings.groveId || env.SVC_PROJECT_ID || DEFAULT_PROJECT
}
