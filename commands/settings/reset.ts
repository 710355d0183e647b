import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'

interface ResetResult {
  section: string
  deleted: boolean
}

export default class SettingsReset extends BaseCommand<ResetResult> {
  static override description = `Reset a Hub settings section to bootstrap (admin).

Deletes the section's database row: the settings file and environment apply again at once, and the section is seeded again at the next start.`
  static override examples = ['<%= config.bin %> settings reset quotas']
  static override args = {section: Args.string({description: 'Section name, like quotas, agent_defaults, runtimes.', required: true})}
  static override flags = {hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'})}

  async execute(): Promise<ResetResult> {
    const {args, flags} = await this.parse(SettingsReset)
    return (await this.client(flags.hub)).call<ResetResult>('DELETE', `/api/v1/admin/server-config/sections/${encodeURIComponent(args.section)}`)
  }

  protected override human(r: ResetResult): string {
    return r.deleted ? `${r.section}: reset to bootstrap` : `${r.section}: already following bootstrap`
  }
}
