import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentFields} from '../../src/cli/agent-render.js'
import {WAIT_FOR, waitForAgent, type WaitFor} from '../../src/cli/agent-wait.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {agentsApi, type Agent} from '../../src/client/agents-client.js'
import {approvalsApi, type Approval} from '../../src/client/approvals-client.js'
import {approvalLine} from '../../src/cli/approval-render.js'
import {parseDuration} from '../../src/domain/shared/clock.js'

export default class AgentWait extends BaseCommand<{agent: Agent; approval?: Approval | null}> {
  static override description = 'Wait until an agent needs input, is idle, or is done; print it. Exit 1 on timeout (wait_timeout) or when it fails (agent_failed).'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    for: Flags.string({description: 'What to wait for: input (waiting_for_input), idle (idle or waiting_for_input), done (stopped, error, completed, limits_exceeded), any.', options: [...WAIT_FOR], default: 'any'}),
    timeout: Flags.string({description: 'Give up after this long (such as 30s, 10m, 1h); default: wait for ever.'}),
    changed: Flags.boolean({description: 'Only a change after this call counts, not the state the agent is in now (after svc keys or svc message: wait for the agent to take it).'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentWait)
    let timeoutMs: number | null = null
    if (flags.timeout !== undefined) {
      timeoutMs = parseDuration(flags.timeout) ?? (/^\d+$/.test(flags.timeout) ? Number(flags.timeout) * 1000 : null)
      if (timeoutMs === null) throw new AppError('usage_error', `--timeout: "${flags.timeout}" is not a duration (such as 30s, 10m or 1h)`)
    }
    const projectId = projectOrDefault(flags.project, await this.settings())
    const client = await this.client(flags.hub)
    const first = (await agentsApi(client).get(projectId, args.agent)).agent
    // After the first read, by ID (top-level route): a name could be reused meanwhile.
    const read = async () => (await client.call<{agent: Agent}>('GET', `/api/v1/agents/${encodeURIComponent(first.id)}`)).agent
    const agent = await waitForAgent(client, read, flags.for as WaitFor, timeoutMs, {changed: flags.changed, base: flags.changed ? first : undefined})
    if (agent.activity !== 'waiting_for_input') return {agent}
    // What it waits for, when it is a permission request: its oldest pending approval (null for a
    // question, or a harness that asks only at its terminal).
    const [approval = null] = (await approvalsApi(client).forAgent(projectId, agent.id, 'pending')).approvals
    return {agent, approval}
  }

  protected override human({agent, approval}: {agent: Agent; approval?: Approval | null}): string {
    return approval ? `${agentFields(agent)}\nApproval:  ${approvalLine(approval)}  (svc agent approve ${agent.name} [--deny])` : agentFields(agent)
  }
}
