import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentTable} from '../../src/cli/agent-render.js'
import {diffstats} from '../../src/cli/agent-diffstats.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'
import {watchAgents} from '../../src/cli/agent-watch.js'

export default class AgentList extends BaseCommand<{agents: Agent[]}> {
  static override description = 'List agents: of the current project, or every project you can access with --all.'
  static override flags = {
    project: Flags.string({description: 'Project ID or slug (default: the current project).'}),
    all: Flags.boolean({description: 'Agents of every project you can access.', exclusive: ['project']}),
    phase: Flags.string({description: 'Only agents in this phase.', options: ['created', 'provisioning', 'cloning', 'running', 'stopped', 'error']}),
    watch: Flags.boolean({char: 'w', description: 'Keep the list live as agents change (with --json: one JSON line per change) until interrupted.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  private changes = new Map<string, string>()

  async execute() {
    const {flags} = await this.parse(AgentList)
    const settings = await this.settings()
    const projectId = flags.all ? undefined : (flags.project ?? settings.groveId ?? undefined)
    const client = await this.client(flags.hub)
    const api = agentsApi(client)
    const first = await api.list({projectId, phase: flags.phase})
    if (!flags.watch) {
      // Counts are for people: --json stays the Hub's list, one fast request.
      if (!this.json) this.changes = await diffstats(client, first.agents)
      return first
    }
    // The stream filters by project ID; the list answered with the agents' own project IDs.
    const pid = projectId && (first.agents[0]?.projectId ?? (await client.getProject(projectId)).project.id)
    return watchAgents(client, {projectId: pid}, async () => (await api.list({projectId, phase: flags.phase})).agents, {
      json: this.json,
      redraw: !!process.stdout.isTTY,
      render: (agents) => agentTable(agents),
    })
  }

  protected override human({agents}: {agents: Agent[]}): string {
    return agentTable(agents, this.changes)
  }
}
