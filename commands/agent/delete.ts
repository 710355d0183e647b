import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'

export default class AgentDelete extends BaseCommand<{agent: Agent}> {
  static override description = 'Stop an agent and remove it (its session ends; its output is kept by the Hub).'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {project: Flags.string({description: 'Project ID or slug.'}), hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {args, flags} = await this.parse(AgentDelete)
    return agentsApi(await this.client(flags.hub)).delete(projectOrDefault(flags.project, await this.settings()), args.agent)
  }

  protected override human({agent}: {agent: Agent}): string {
    return `Deleted agent ${agent.name} (${agent.id}).`
  }
}
