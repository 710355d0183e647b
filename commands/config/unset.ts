import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import type {ConfigUnsetResult} from '../../src/config/settings-service.js'

export default class ConfigUnset extends BaseCommand<ConfigUnsetResult> {
  static override description = `Remove a setting (or a whole block) from a settings file, keeping its comments and layout.

Works on the same file as \`config set\`: the checkout's .svc/settings.yaml, else (or with --global) ~/.svc/settings.yaml. Any key may be removed, known or not.`
  static override examples = ['<%= config.bin %> config unset hub.endpoint', '<%= config.bin %> config unset --global runtimes.podman']
  static override args = {key: Args.string({description: 'Dotted settings key or block, like hub.endpoint or runtimes.podman.', required: true})}
  static override flags = {global: Flags.boolean({description: 'Edit ~/.svc/settings.yaml even inside a checkout.'})}

  async execute(): Promise<ConfigUnsetResult> {
    const {args, flags} = await this.parse(ConfigUnset)
    const {unsetSetting} = await import('../../src/config/settings-service.js')
    return unsetSetting(args.key, flags.global, {cwd: process.cwd(), env: process.env})
  }

  protected override human(r: ConfigUnsetResult): string {
    const head = r.removed ? `Removed ${r.key} from ${r.file} (${r.scope}).` : `${r.key} is not set in ${r.file}; nothing written.`
    return [head, ...r.warnings.map((w) => `Warning: ${w}`)].join('\n')
  }
}
