import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'

interface Profiling {
  readiness_marks: boolean
  revision: number
}

export default class AdminProfiling extends BaseCommand<Profiling> {
  static override description = `Show or set the Hub's profiling settings (admin, interactive session).

readiness_marks: when true the web client writes readiness performance marks. "reset" returns to the default (false).`
  static override examples = ['<%= config.bin %> admin profiling get', '<%= config.bin %> admin profiling set true', '<%= config.bin %> admin profiling set reset']
  static override args = {
    action: Args.string({description: 'get or set.', options: ['get', 'set'], default: 'get'}),
    value: Args.string({description: 'For set: true, false or reset.'}),
  }
  static override flags = {hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'})}

  async execute(): Promise<Profiling> {
    const {args, flags} = await this.parse(AdminProfiling)
    if (args.action === 'set' && !['true', 'false', 'reset'].includes(args.value ?? '')) throw new AppError('usage_error', 'admin profiling set takes true, false or reset')
    const client = await this.client(flags.hub)
    const current = await client.call<Profiling>('GET', '/api/v1/admin/profiling')
    if (args.action === 'get') return current
    const value = args.value === 'reset' ? null : args.value === 'true'
    return client.call<Profiling>('PUT', '/api/v1/admin/profiling', {readiness_marks: value, revision: current.revision})
  }

  protected override human(p: Profiling): string {
    return `readiness_marks: ${p.readiness_marks} (revision ${p.revision})`
  }
}
