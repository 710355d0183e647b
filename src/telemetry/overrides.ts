import {stringify} from 'yaml'
import {AppError} from '../api/app-error.js'
import {validateSettingsText} from '../config/settings-validate.js'
import {mergeTelemetry} from './config.js'

type Tree = Record<string, unknown>

/** Where a template carries its telemetry override: its project settings file. */
export const TEMPLATE_SETTINGS_FILE = '.svc/settings.yaml'

/**
 * The telemetry override of a new agent: the `telemetry` block of its template's
 * `.svc/settings.yaml` (the file the agent's workspace gets), then the `telemetry` object of the
 * create request, merged later-wins. Null when neither sets anything.
 *
 * Throws 400 `validation_error` when the request's block breaks the settings schema; a
 * template's file with errors contributes only its valid keys (as any settings file does).
 */
export function agentTelemetryOverride(input: {
  /** The template's files as stored: content in base64. */
  templateFiles?: Array<{path: string; content: string}>
  requested?: unknown
}): Tree | null {
  const file = input.templateFiles?.find((f) => f.path === TEMPLATE_SETTINGS_FILE)
  const text = file ? Buffer.from(file.content, 'base64').toString('utf8') : null
  const fromTemplate = text !== null ? (validateSettingsText(TEMPLATE_SETTINGS_FILE, text).tree.telemetry as Tree | undefined) : undefined
  let requested: Tree | undefined
  if (input.requested !== undefined && input.requested !== null) {
    const checked = validateSettingsText('(request)', stringify({schema_version: '1', telemetry: input.requested}))
    const errors = checked.issues.filter((i) => i.severity === 'error')
    if (errors.length || typeof input.requested !== 'object' || Array.isArray(input.requested)) {
      const fields = errors.length ? errors.map((i) => ({path: i.key, message: i.message})) : [{path: 'telemetry', message: 'expected an object'}]
      throw new AppError('validation_error', fields.map((f) => `${f.path} ${f.message}`).join('; '), {fields})
    }
    requested = checked.tree.telemetry as Tree
  }
  const merged = mergeTelemetry(fromTemplate, requested)
  return Object.keys(merged).length ? merged : null
}
