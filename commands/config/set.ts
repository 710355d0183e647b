import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {formatValue} from '../../src/cli/config-render.js'
import type {ConfigSetResult} from '../../src/config/settings-service.js'
import {settingsKeyHelp} from '../../src/config/schema/help.js'

export default class ConfigSet extends BaseCommand<ConfigSetResult> {
  static override description = `Set a setting in a settings file, keeping its comments and layout.

Writes the checkout's .svc/settings.yaml when run inside a checkout that has a .svc directory, else (or with --global) ~/.svc/settings.yaml; a missing file is created with schema_version: "1". VALUE is parsed by the key's type: true/false, whole numbers, strings; a list as JSON (["a","b"]) or comma-separated (a list replaces the list); a block as a JSON object, merged into the block that is there key by key (null removes a key; the other keys and their comments stay). Unknown keys are refused. Required secrets never belong here: they are asked for when an agent is created.

Keys:
${settingsKeyHelp()}`
  static override examples = ['<%= config.bin %> config set hub.endpoint http://hub.example:9810', '<%= config.bin %> config set --global telemetry.enabled true', '<%= config.bin %> config set runtimes.docker.env \'{"DOCKER_BUILDKIT":"1"}\'']
  static override args = {
    key: Args.string({description: 'Dotted settings key, like hub.endpoint.', required: true}),
    value: Args.string({description: 'The value, parsed by the key\'s type.', required: true}),
  }
  static override flags = {global: Flags.boolean({description: 'Write ~/.svc/settings.yaml even inside a checkout.'})}

  async execute(): Promise<ConfigSetResult> {
    const {args, flags} = await this.parse(ConfigSet)
    const {setSetting} = await import('../../src/config/settings-service.js')
    return setSetting(args.key, args.value, flags.global, {cwd: process.cwd(), env: process.env})
  }

  protected override human(r: ConfigSetResult): string {
    const head = r.changed
      ? `Set ${r.key} to ${formatValue(r.value)} in ${r.file} (${r.scope}${r.created ? ', created' : ''}).`
      : `${r.key} is already ${formatValue(r.value)} in ${r.file}; nothing written.`
    return [head, ...r.warnings.map((w) => `Warning: ${w}`)].join('\n')
  }
}
