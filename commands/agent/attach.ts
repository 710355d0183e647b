import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {runTerminal, terminalSize} from '../../src/cli/ws-terminal.js'
import {agentRoute} from '../../src/client/agents-client.js'

export default class AgentAttach extends BaseCommand<null> {
  static override description = `Attach your terminal to an agent's terminal, through the Hub and its broker's tunnel.

Typing goes to the agent. Press Ctrl-] to detach; the agent keeps running. Without a TTY, standard input is sent as it is and the command detaches when it ends.`
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {project: Flags.string({description: 'Project ID or slug.'}), hub: Flags.string({description: 'Hub URL.'})}

  async execute(): Promise<null> {
    const {args, flags} = await this.parse(AgentAttach)
    const projectId = projectOrDefault(flags.project, await this.settings())
    const client = await this.client(flags.hub)
    const size = process.stdout.isTTY ? `?cols=${terminalSize().cols}&rows=${terminalSize().rows}` : ''
    let failure: AppError | null = null
    await runTerminal(`${client.endpoint}${agentRoute(args.agent, projectId)}/attach${size}`, {interactive: true, onError: (c, m) => (failure = new AppError(c as never, m))})
    if (failure) throw failure
    return null
  }

  protected override human(): null {
    return null
  }
}
