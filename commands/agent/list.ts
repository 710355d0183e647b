import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentTable} from '../../src/cli/agent-list-render.js'
import {diffstats} from '../../src/cli/agent-diffstats.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'
import {watchAgents} from '../../src/cli/agent-watch.js'

export default class AgentList extends BaseCommand<{agents: Agent[]}> {
  static override description = `List agents: of the current project, or every project you can access with --all.

Agents that need you come first: those waiting for input, then those that failed (phase error), then the rest, oldest first. IDs are shown by their shortest unique start (8 or more characters), which every agent command takes as it takes the whole ID; --wide shows whole IDs. TASK is the first line of the agent's task, cut to the terminal's width on a terminal (whole otherwise, and with --wide). LANDED says whether the agent's work was merged or pushed. A footer counts the agents and totals their cost.`
  static override flags = {
    project: Flags.string({description: 'Project ID or slug (default: the current project).'}),
    all: Flags.boolean({description: 'Agents of every project you can access.', exclusive: ['project']}),
    phase: Flags.string({description: 'Only agents in this phase.', options: ['created', 'provisioning', 'cloning', 'running', 'stopped', 'error']}),
    wide: Flags.boolean({description: 'Full agent IDs and whole tasks (by default IDs are cut to their shortest unique start, 8 or more characters, and on a terminal the task to its width).'}),
    watch: Flags.boolean({char: 'w', description: 'Keep the list live as agents change (with --json: one JSON line per change) until interrupted.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  private changes = new Map<string, string>()
  private wide = false
  private otherIds: string[] = []

  async execute() {
    const {flags} = await this.parse(AgentList)
    this.wide = flags.wide
    const settings = await this.settings()
    const projectId = flags.all ? undefined : (flags.project ?? settings.groveId ?? undefined)
    const client = await this.client(flags.hub)
    const api = agentsApi(client)
    const first = await api.list({projectId, phase: flags.phase})
    if (!flags.watch) {
      // Counts are for people: --json stays the Hub's list, one fast request.
      if (!this.json) {
        this.changes = await diffstats(client, first.agents)
        // Short IDs must name one agent among those the phase filter hid too.
        if (flags.phase) this.otherIds = (await api.list({projectId})).agents.map((a) => a.id)
      }
      return first
    }
    // The stream filters by project ID; the list answered with the agents' own project IDs.
    const pid = projectId && (first.agents[0]?.projectId ?? (await client.getProject(projectId)).project.id)
    return watchAgents(client, {projectId: pid}, async () => (await api.list({projectId, phase: flags.phase})).agents, {
      json: this.json,
      redraw: !!process.stdout.isTTY,
      render: (agents) => agentTable(agents, undefined, {wide: flags.wide}),
    })
  }

  protected override human({agents}: {agents: Agent[]}): string {
    return agentTable(agents, this.changes, {wide: this.wide, otherIds: this.otherIds})
  }
}
