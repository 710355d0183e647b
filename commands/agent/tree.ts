import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {renderTrees, type AgentTree} from '../../src/cli/agent-tree-render.js'
import {agentRoute, agentsApi} from '../../src/client/agents-client.js'

export default class AgentTreeCommand extends BaseCommand<{trees: AgentTree[]}> {
  static override description = `Show who spawned whom: an agent's team as a tree, each agent's state, branch and cost, with the subtree's totals.

Without AGENT, every root agent of the project (an agent no other agent leads) with its team.`
  static override args = {agent: Args.string({description: 'Agent name or ID (default: every root of the project).'})}
  static override flags = {
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentTreeCommand)
    const client = await this.client(flags.hub)
    const projectId = projectOrDefault(flags.project, await this.settings())
    let roots: string[]
    if (args.agent) roots = [args.agent]
    else {
      const {agents} = await agentsApi(client).list({projectId})
      roots = agents.filter((a) => !a.parent).map((a) => a.id)
    }
    const trees: AgentTree[] = []
    for (const r of roots) trees.push(await client.call<AgentTree>('GET', `${agentRoute(r, projectId)}/tree`))
    return {trees}
  }

  protected override human({trees}: {trees: AgentTree[]}): string {
    return renderTrees(trees)
  }
}
