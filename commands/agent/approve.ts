import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {approvalLine} from '../../src/cli/approval-render.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {approvalsApi, type Approval} from '../../src/client/approvals-client.js'

export default class AgentApprove extends BaseCommand<{approval: Approval}> {
  static override description = "Allow (or with --deny, refuse) an agent's oldest pending permission request; its harness gets the answer through its hook, nothing is typed into its terminal."
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    deny: Flags.boolean({description: 'Refuse instead of allow: the tool does not run and the model is told why.'}),
    reason: Flags.string({description: 'Why (the model reads it on a deny).'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentApprove)
    const api = approvalsApi(await this.client(flags.hub))
    const [oldest] = (await api.forAgent(projectOrDefault(flags.project, await this.settings()), args.agent, 'pending')).approvals
    if (!oldest) throw new AppError('not_found', `agent ${args.agent} has no pending approval`)
    return api.decide(oldest.id, {decision: flags.deny ? 'deny' : 'allow', ...(flags.reason !== undefined && {reason: flags.reason})})
  }

  protected override human({approval}: {approval: Approval}): string {
    return approvalLine(approval)
  }
}
