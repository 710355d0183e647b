import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentFields} from '../../src/cli/agent-render.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'

export default class AgentReincarnate extends BaseCommand<{agent: Agent}> {
  static override description = `Re-record an agent's delegation and restart it with a fresh token.

Run by a user, this records the agent's delegation again with you as delegator when its own delegation, or one above it, was never recorded (agents from a release before provenance); that lifts the denial of permissions such as secrets and service accounts. Run by an agent it only restarts (an agent cannot change a role). --role records a new delegation with that role.`
  static override examples = ['<%= config.bin %> agent reincarnate builder', '<%= config.bin %> agent reincarnate builder --role baseline --project acme']
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    role: Flags.string({description: 'New agent role.', options: ['readonly', 'baseline', 'full', 'none']}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentReincarnate)
    return agentsApi(await this.client(flags.hub)).reincarnate(projectOrDefault(flags.project, await this.settings()), args.agent, flags.role)
  }

  protected override human({agent}: {agent: Agent}): string {
    return `Agent ${agent.name} reincarnated.\n${agentFields(agent)}`
  }
}
