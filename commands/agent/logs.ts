import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {terminalText} from '../../src/api/terminal-text.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {runTerminal} from '../../src/cli/ws-terminal.js'
import {agentRoute, agentsApi} from '../../src/client/agents-client.js'

export default class AgentLogs extends BaseCommand<{logs: string} | null> {
  static override description = 'Print an agent\'s output; with --follow, stream it live until interrupted.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    follow: Flags.boolean({char: 'f', description: 'Keep streaming new output.', exclusive: ['json']}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentLogs)
    const projectId = projectOrDefault(flags.project, await this.settings())
    const client = await this.client(flags.hub)
    // The saved output is terminal bytes: escape sequences would recolour or retitle the
    // reader's terminal and clutter --json, so both get plain text (as the web page shows).
    if (!flags.follow) return {logs: terminalText(await agentsApi(client).logs(projectId, args.agent))}
    let failure: AppError | null = null
    const code = await runTerminal(`${client.endpoint}${agentRoute(args.agent, projectId)}/logs`, {
      interactive: false,
      onError: (c, m) => (failure = new AppError(c as never, m)),
    })
    if (failure) throw failure
    if (code) process.exitCode = code
    return null
  }

  protected override human(result: {logs: string} | null): string | null {
    return result ? result.logs : null
  }
}
