import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'
import {agentFields} from '../../src/cli/agent-render.js'

export default class AgentCreate extends BaseCommand<{agent: Agent}> {
  static override description = `Create an agent and dispatch it to a runtime broker.

The project is --project, else SVC_HUB_GROVE_ID, else hub.grove_id in .svc/settings.yaml, else the workstation's "default" project. The broker is --broker, else the project's default broker, else the Hub's default (its co-located broker on a workstation).`
  static override examples = ['<%= config.bin %> agent create demo --harness shell', '<%= config.bin %> agent create fixer --harness claude --task "fix the failing test" --project acme']
  static override args = {name: Args.string({description: 'Name of the agent, unique in its project.', required: true})}
  static override flags = {
    harness: Flags.string({description: 'Harness config (built-in: shell).'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    template: Flags.string({description: 'Template ID or name.'}),
    task: Flags.string({description: 'Task given to the harness.'}),
    broker: Flags.string({description: 'Broker ID to run on.'}),
    role: Flags.string({description: 'Agent role.', options: ['readonly', 'baseline', 'full', 'none']}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentCreate)
    const projectId = projectOrDefault(flags.project, await this.settings())
    const api = agentsApi(await this.client(flags.hub))
    return api.create({name: args.name, projectId, harnessConfig: flags.harness, template: flags.template, task: flags.task, brokerId: flags.broker, role: flags.role})
  }

  protected override human({agent}: {agent: Agent}): string {
    const head = agent.phase === 'error' ? `Agent ${agent.name} failed to start: ${agent.error}` : `Agent ${agent.name} is ${agent.phase}.`
    return `${head}\n${agentFields(agent)}`
  }
}
