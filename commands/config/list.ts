import {BaseCommand} from '../../src/cli/base-command.js'
import {table, useColor} from '../../src/cli/render.js'
import type {ConfigListResult} from '../../src/config/settings-service.js'
import {formatValue, originLabel} from '../../src/cli/config-render.js'

export default class ConfigList extends BaseCommand<ConfigListResult> {
  static override description = `List every effective setting and where it comes from.

Settings are merged in this order, later wins: coded defaults, the global file ~/.svc/settings.yaml, the checkout's .svc/settings.yaml, then the SVC_* overrides (SVC_ACTIVE_PROFILE, SVC_HUB_ENDPOINT, ...). ORIGIN is default, global, project or environment, with the file line or the variable.`
  static override examples = ['<%= config.bin %> config list', '<%= config.bin %> config list --json']

  async execute(): Promise<ConfigListResult> {
    await this.parse(ConfigList)
    const {listSettings} = await import('../../src/config/settings-service.js')
    return listSettings({cwd: process.cwd(), env: process.env})
  }

  protected override human(r: ConfigListResult): string {
    const lines: string[] = []
    lines.push(r.files.length ? r.files.map((f) => `${f.scope} file: ${f.path}`).join('\n') : 'No settings files; showing defaults.')
    if (r.activeProfile) lines.push(`active profile: ${r.activeProfile}`)
    lines.push('')
    lines.push(table(['key', 'value', 'origin'], r.values.map((v) => [v.key, formatValue(v.value), originLabel(v)]), useColor()))
    const errors = r.issues.filter((i) => i.severity === 'error').length
    const warnings = r.issues.length - errors
    if (r.issues.length) lines.push('', `${errors} error(s), ${warnings} warning(s) in the settings: run \`svc config validate\`.`)
    return lines.join('\n')
  }
}
