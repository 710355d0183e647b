import {Args} from '@oclif/core'
// Static: yaml is in the CLI's bundle (scripts/build.mjs), where a dynamic import of this
// CommonJS package yields no named exports.
import {stringify} from 'yaml'
import {BaseCommand} from '../../src/cli/base-command.js'
import type {ConfigGetResult} from '../../src/config/settings-service.js'

export default class ConfigGet extends BaseCommand<ConfigGetResult> {
  static override description = `Print the effective value of a setting.

A string prints as it is, a number or boolean as written, a list or block as YAML; an unset key prints nothing. With --json: the value, its origin (default, global, project, environment, or mixed for a block) and the values behind it.`
  static override examples = ['<%= config.bin %> config get hub.endpoint', '<%= config.bin %> config get telemetry --json']
  static override args = {key: Args.string({description: 'Dotted settings key, like hub.endpoint or runtimes.docker.host.', required: true})}

  private yamlText = ''

  async execute(): Promise<ConfigGetResult> {
    const {args} = await this.parse(ConfigGet)
    const {getSetting} = await import('../../src/config/settings-service.js')
    const r = await getSetting(args.key, {cwd: process.cwd(), env: process.env})
    if (!this.json && r.value !== null && typeof r.value === 'object') this.yamlText = stringify(r.value, {lineWidth: 0})
    return r
  }

  protected override human(r: ConfigGetResult): string {
    if (r.value === null || r.value === undefined) return ''
    if (typeof r.value === 'object') return this.yamlText
    return String(r.value)
  }
}
