import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentTable} from '../../src/cli/agent-render.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'

export default class AgentList extends BaseCommand<{agents: Agent[]}> {
  static override description = 'List agents: of the current project, or every project you can access with --all.'
  static override flags = {
    project: Flags.string({description: 'Project ID or slug (default: the current project).'}),
    all: Flags.boolean({description: 'Agents of every project you can access.', exclusive: ['project']}),
    phase: Flags.string({description: 'Only agents in this phase.', options: ['created', 'provisioning', 'cloning', 'running', 'stopped', 'error']}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {flags} = await this.parse(AgentList)
    const settings = await this.settings()
    const projectId = flags.all ? undefined : (flags.project ?? settings.groveId ?? undefined)
    return agentsApi(await this.client(flags.hub)).list({projectId, phase: flags.phase})
  }

  protected override human({agents}: {agents: Agent[]}): string {
    return agentTable(agents)
  }
}
