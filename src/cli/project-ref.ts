import {AppError} from '../api/app-error.js'
import type {CliSettings} from '../config/cli-settings.js'

/** The project of a command: `--project`, then `SVC_HUB_GROVE_ID`, then the checkout's `hub.grove_id`. */
export function projectOf(flag: string | undefined, settings: CliSettings): string {
  const id = flag || settings.groveId
  if (!id) throw new AppError('usage_error', 'no project: pass --project, set SVC_HUB_GROVE_ID, or set hub.grove_id in .svc/settings.yaml')
  return id
}
