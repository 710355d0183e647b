import {stringify} from 'yaml'
import {AppError} from '../../api/app-error.js'
import {validateSettingsText} from '../../config/settings-validate.js'
import {checkAssign, NO_CLOUD_IAM, type CloudIdentityPolicy} from './cloud-identity.js'
import {refusePrivateChannels} from '../events/webhook-guard.js'
import {sectionOf, unflatten, type Tree} from './keys.js'

export const CLOUD_IDENTITY_MODES = ['Block', 'Passthrough', 'Assign'] as const

/** An IANA zone name the runtime knows; `Local` (a Go-ism meaning "the host's zone") is refused. */
export function isIanaZone(name: string): boolean {
  if (name === 'Local' || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false
  try {
    new Intl.DateTimeFormat('en-US', {timeZone: name})
    return true
  } catch {
    return false
  }
}

export interface SectionIssue {
  key: string
  message: string
}

/**
 * Checks the new values of Layer-1 sections (section -> flat value) as a whole. Throws 422
 * `invalid_timezone` / `invalid_cloud_identity_mode` for those two keys (including an `Assign`
 * the cloud identity policy refuses), else 400 `validation_failed` with every problem listed under
 * its section (`details.sections`).
 */
export function validateSections(next: Record<string, Tree>, cloud: CloudIdentityPolicy = NO_CLOUD_IAM): void {
  for (const flat of Object.values(next)) {
    const tz = flat.default_timezone
    if (tz !== undefined && tz !== null && tz !== '' && (typeof tz !== 'string' || !isIanaZone(tz))) {
      throw new AppError('invalid_timezone', `default_timezone: ${JSON.stringify(tz)} is not an IANA time zone name (such as Europe/Paris or UTC); Local is not accepted`, {key: 'default_timezone', value: tz})
    }
    const mode = flat.default_cloud_identity_mode
    if (mode !== undefined && mode !== null && mode !== '' && !CLOUD_IDENTITY_MODES.includes(mode as never)) {
      throw new AppError('invalid_cloud_identity_mode', `default_cloud_identity_mode: expected one of ${CLOUD_IDENTITY_MODES.join(', ')}, found ${JSON.stringify(mode)}`, {key: 'default_cloud_identity_mode', value: mode, allowed: [...CLOUD_IDENTITY_MODES]})
    }
    checkAssign(flat, cloud)
    // 422 before the other checks, like the two above (CONTRACT "Isolation": webhook targets).
    refusePrivateChannels(flat['server.notification_channels'])
  }
  const issues: Record<string, SectionIssue[]> = {}
  const add = (section: string, key: string, message: string) => (issues[section] ??= []).push({key, message})
  for (const [section, flat] of Object.entries(next)) {
    // Null clears a key: check only what is set.
    const set = Object.fromEntries(Object.entries(flat).filter(([, v]) => v !== null))
    const rm = set['profiling.readiness_marks']
    if (rm !== undefined && typeof rm !== 'boolean') add(section, 'profiling.readiness_marks', 'expected true or false')
    const text = stringify({schema_version: '1', ...unflatten(set)})
    for (const i of validateSettingsText('(request)', text).issues) {
      if (i.severity !== 'error') continue
      add(sectionOf(i.key) ?? section, i.key, i.message)
    }
  }
  if (Object.keys(issues).length) {
    const summary = Object.values(issues).flat().map((i) => `${i.key}: ${i.message}`).join('; ')
    throw new AppError('validation_failed', `invalid settings: ${summary}`, {sections: issues})
  }
}
