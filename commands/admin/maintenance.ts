import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {fields} from '../../src/cli/render.js'

interface MaintenanceState {
  enabled: boolean
  message: string
  break_glass: boolean
  updated_by: string | null
  updated_at: string | null
}

export default class AdminMaintenance extends BaseCommand<MaintenanceState> {
  static override description = `Show or change the Hub's maintenance mode (admin).

While it is on, the Hub refuses mutating requests of non-admins with 503 system_maintenance. The state is kept in the database and survives restarts.`
  static override examples = ['<%= config.bin %> admin maintenance status', '<%= config.bin %> admin maintenance on --message "upgrading until 10:00"', '<%= config.bin %> admin maintenance off']
  static override args = {action: Args.string({description: 'status, on or off.', options: ['status', 'on', 'off'], default: 'status'})}
  static override flags = {
    message: Flags.string({description: 'Message shown to refused callers.'}),
    hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'}),
  }

  async execute(): Promise<MaintenanceState> {
    const {args, flags} = await this.parse(AdminMaintenance)
    const client = await this.client(flags.hub)
    if (args.action === 'status' && flags.message === undefined) return client.call<MaintenanceState>('GET', '/api/v1/admin/maintenance')
    const body = {...(args.action !== 'status' && {enabled: args.action === 'on'}), ...(flags.message !== undefined && {message: flags.message})}
    return client.call<MaintenanceState>('PUT', '/api/v1/admin/maintenance', body)
  }

  protected override human(m: MaintenanceState): string {
    return fields([
      ['Maintenance', m.enabled ? 'on' : 'off'],
      ['Message', m.message || '-'],
      ['Break-glass', m.break_glass ? 'yes (started with admin mode: this run stays in maintenance)' : 'no'],
      ['Updated', m.updated_at ? `${m.updated_at} by ${m.updated_by}` : '-'],
    ])
  }
}
