import {Args, Flags} from '@oclif/core'
import {AppError} from '../src/api/app-error.js'
import {BaseCommand} from '../src/cli/base-command.js'
import {agentsApi} from '../src/client/agents-client.js'

const ACTIVITIES = ['idle', 'thinking', 'executing', 'waiting_for_input', 'completed', 'limits_exceeded', 'offline']

export default class Status extends BaseCommand<{ok: true; kept?: true}> {
  static override description = `Report this agent's own state to the Hub (run inside an agent: uses SVC_AGENT_ID, SVC_AUTH_TOKEN and SVC_HUB_ENDPOINT).

With no argument and no flag it sends a heartbeat. Inside an agent a report no Hub takes (all replicas unreachable) is kept and delivered later, like the hooks' reports ("kept": true).`
  static override examples = ['<%= config.bin %> status thinking --detail "reading the failing test"', '<%= config.bin %> status --phase stopped']
  static override args = {activity: Args.string({description: 'Activity.', options: ACTIVITIES})}
  static override flags = {
    phase: Flags.string({description: 'Phase.', options: ['created', 'provisioning', 'cloning', 'running', 'stopped', 'error']}),
    detail: Flags.string({description: 'Free text: tool name, message, task summary.'}),
    agent: Flags.string({description: 'Agent ID (default: SVC_AGENT_ID).', env: 'SVC_AGENT_ID'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<{ok: true; kept?: true}> {
    const {args, flags} = await this.parse(Status)
    if (!flags.agent) throw new AppError('usage_error', 'no agent: run inside an agent (SVC_AGENT_ID is set there) or pass --agent')
    const body = {phase: flags.phase, activity: args.activity, detail: flags.detail, heartbeat: true}
    // Inside an agent its report goes the way its hooks' do: to each of the deployment's URLs in
    // turn, and kept for later delivery (by the next report, or the agent's broker) when no
    // replica takes it. A refusal (4xx) is asked again below to show the Hub's own error.
    if (!flags.hub && flags.agent === process.env.SVC_AGENT_ID) {
      const {deliver, keptReportsFile} = await import('../src/broker/status-delivery.js')
      const {agentToken, hubEndpoints} = await import('../src/broker/hub-post.js')
      if (agentToken(process.env) && hubEndpoints(process.env).length) {
        const answer = await deliver(process.env, {phase: flags.phase, activity: args.activity as never, detail: flags.detail})
        if (typeof answer === 'number' && answer < 300) return {ok: true}
        if (typeof answer !== 'number' || answer >= 500) {
          if (!keptReportsFile(process.env)) throw new AppError('hub_unreachable', `the report was not delivered: no Hub at ${hubEndpoints(process.env).join(', ')} took it`)
          process.stderr.write('svc status: no Hub took the report now; it is kept and delivered with the next report or by the agent\'s broker\n')
          return {ok: true, kept: true}
        }
      }
    }
    return agentsApi(await this.client(flags.hub)).status(flags.agent, body)
  }

  protected override human(): string | null {
    return null
  }
}
