import {Args} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {formatIssue} from '../../src/config/settings-issues.js'
import type {ConfigValidateResult} from '../../src/config/settings-service.js'

export default class ConfigValidate extends BaseCommand<ConfigValidateResult> {
  static override description = `Check settings files against the schema.

Each problem prints as file:line:column: key: expected X, found Y. Unknown keys are warnings (they are kept). Without FILE, checks the global file, the checkout's file and the SVC_* overrides together; with FILE, checks that file as it would be loaded over the global one. Exit 0 when valid (warnings allowed), 1 when there are errors.`
  static override examples = ['<%= config.bin %> config validate', '<%= config.bin %> config validate .svc/settings.yaml']
  static override args = {file: Args.string({description: 'Settings file to check (default: the files in effect here).'})}

  async execute(): Promise<ConfigValidateResult> {
    const {args} = await this.parse(ConfigValidate)
    const {validateSettings} = await import('../../src/config/settings-service.js')
    return validateSettings(args.file, {cwd: process.cwd(), env: process.env})
  }

  override async run(): Promise<ConfigValidateResult> {
    const r = await super.run()
    if (!r.valid) process.exitCode = 1
    return r
  }

  protected override human(r: ConfigValidateResult): string {
    const lines = [...r.errors, ...r.warnings].map(formatIssue)
    if (!r.files.length) lines.push('No settings files found.')
    else if (r.valid) lines.push(`${r.files.join(', ')}: valid${r.warnings.length ? ` (${r.warnings.length} warning(s))` : ''}.`)
    else lines.push(`${r.errors.length} error(s), ${r.warnings.length} warning(s).`)
    return lines.join('\n')
  }
}
