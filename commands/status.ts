import {Args, Flags} from '@oclif/core'
import {AppError} from '../src/api/app-error.js'
import {BaseCommand} from '../src/cli/base-command.js'
import {agentsApi} from '../src/client/agents-client.js'

const ACTIVITIES = ['idle', 'thinking', 'executing', 'waiting_for_input', 'completed', 'limits_exceeded', 'offline']

export default class Status extends BaseCommand<{ok: true}> {
  static override description = `Report this agent's own state to the Hub (run inside an agent: uses SVC_AGENT_ID, SVC_AUTH_TOKEN and SVC_HUB_ENDPOINT).

With no argument and no flag it sends a heartbeat.`
  static override examples = ['<%= config.bin %> status thinking --detail "reading the failing test"', '<%= config.bin %> status --phase stopped']
  static override args = {activity: Args.string({description: 'Activity.', options: ACTIVITIES})}
  static override flags = {
    phase: Flags.string({description: 'Phase.', options: ['created', 'provisioning', 'cloning', 'running', 'stopped', 'error']}),
    detail: Flags.string({description: 'Free text: tool name, message, task summary.'}),
    agent: Flags.string({description: 'Agent ID (default: SVC_AGENT_ID).', env: 'SVC_AGENT_ID'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<{ok: true}> {
    const {args, flags} = await this.parse(Status)
    if (!flags.agent) throw new AppError('usage_error', 'no agent: run inside an agent (SVC_AGENT_ID is set there) or pass --agent')
    const body = {phase: flags.phase, activity: args.activity, detail: flags.detail, heartbeat: true}
    return agentsApi(await this.client(flags.hub)).status(flags.agent, body)
  }

  protected override human(): string | null {
    return null
  }
}
