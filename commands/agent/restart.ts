import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentFields} from '../../src/cli/agent-render.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'

export default class AgentRestart extends BaseCommand<{agent: Agent}> {
  static override description = 'Stop an agent and start it again.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    project: Flags.string({description: 'Project ID or slug.'}),
    setup: Flags.boolean({description: 'Run the workspace\'s setup (.svc/setup or workspace.setup, as decided when the agent was made) again before the harness; exit 1 (agent_failed) when it fails.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentRestart)
    const {agent} = await agentsApi(await this.client(flags.hub)).action(projectOrDefault(flags.project, await this.settings()), args.agent, 'restart', flags.setup ? {setup: true} : {})
    if (agent.phase === 'error') throw new AppError('agent_failed', `agent ${agent.name} did not start again: ${agent.error ?? 'unknown reason'}`, {agent})
    return {agent}
  }

  protected override human({agent}: {agent: Agent}): string {
    return agentFields(agent)
  }
}
