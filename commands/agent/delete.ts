import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'
import type {DeletedBranchDto} from '../../src/api/dto.js'

type Deleted = {agent: Agent; branch?: DeletedBranchDto}

export default class AgentDelete extends BaseCommand<Deleted> {
  static override description = 'Stop an agent and remove it (its session ends; its output is kept by the Hub). Its work tree and repository go, with what it left uncommitted; its branch is kept in the project\'s checkout as svc/<name> (as svc/<name>-<first 8 characters of its ID> when the checkout\'s svc/<name> holds other work) or, for a clone with commits nobody pushed, in the broker\'s kept-branches. With --branch, the branch goes too when its base branch in the checkout already has all of it; a branch that is not merged is kept, and the output says why.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    branch: Flags.boolean({description: 'Also delete the agent\'s branch svc/<name> once it is merged into its base branch (kept otherwise, saying why).'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }
  static override examples = ['<%= config.bin %> agent delete alice', '<%= config.bin %> agent delete alice --branch']

  async execute() {
    const {args, flags} = await this.parse(AgentDelete)
    return agentsApi(await this.client(flags.hub)).delete(projectOrDefault(flags.project, await this.settings()), args.agent, {branch: flags.branch})
  }

  protected override human({agent, branch}: Deleted): string {
    const line = `Deleted agent ${agent.name} (${agent.id}).`
    if (!branch) return line
    return `${line}\n${branch.deleted ? `Deleted its branch ${branch.name} (merged).` : `Kept its branch ${branch.name}: ${branch.reason ?? 'not merged'}.`}`
  }
}
