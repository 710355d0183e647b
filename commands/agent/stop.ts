import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentFields} from '../../src/cli/agent-render.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'

export default class AgentStop extends BaseCommand<{agent: Agent}> {
  static override description = 'Stop an agent: its session ends and its output is kept; it can be started again.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {project: Flags.string({description: 'Project ID or slug.'}), hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {args, flags} = await this.parse(AgentStop)
    return agentsApi(await this.client(flags.hub)).action(projectOrDefault(flags.project, await this.settings()), args.agent, 'stop')
  }

  protected override human({agent}: {agent: Agent}): string {
    return agentFields(agent)
  }
}
