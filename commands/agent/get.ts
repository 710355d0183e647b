import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentFields} from '../../src/cli/agent-render.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'
import {watchAgents} from '../../src/cli/agent-watch.js'

export default class AgentGet extends BaseCommand<{agent: Agent}> {
  static override description = 'Show an agent: phase, activity and detail.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    project: Flags.string({description: 'Project ID or slug.'}),
    watch: Flags.boolean({char: 'w', description: 'Keep showing the agent as it changes (with --json: one JSON line per change) until interrupted.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentGet)
    const client = await this.client(flags.hub)
    const got = await agentsApi(client).get(projectOrDefault(flags.project, await this.settings()), args.agent)
    if (!flags.watch) return got
    const id = got.agent.id
    return watchAgents(client, {agentId: id}, async () => [(await client.call<{agent: Agent}>('GET', `/api/v1/agents/${encodeURIComponent(id)}`)).agent], {
      json: this.json,
      redraw: !!process.stdout.isTTY,
      render: (agents) => (agents[0] ? agentFields(agents[0]) : 'The agent was deleted.'),
    })
  }

  protected override human({agent}: {agent: Agent}): string {
    return agentFields(agent)
  }
}
