import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {runTerminal} from '../../src/cli/ws-terminal.js'
import {agentRoute} from '../../src/client/agents-client.js'

export default class AgentLogs extends BaseCommand<{logs: string} | null> {
  static override description = [
    'Print an agent\'s output as the text its terminal shows (rendered by a terminal emulator); with --follow, stream it live until interrupted.',
    'A deleted agent\'s output stays readable by its ID for server.retention.deleted_agent_logs (default 7 days).',
    'With --follow, a terminal gets the raw terminal bytes (it draws them itself); a pipe or file gets lines of text, each once it has scrolled off the agent\'s screen, and the screen when the stream ends.',
  ].join('\n')
  static override args = {agent: Args.string({description: 'Agent name or ID (a deleted agent: its ID).', required: true})}
  static override flags = {
    follow: Flags.boolean({char: 'f', description: 'Keep streaming new output.', exclusive: ['json']}),
    raw: Flags.boolean({description: 'The terminal bytes as recorded (escape sequences included) instead of the screen text.'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentLogs)
    const projectId = projectOrDefault(flags.project, await this.settings())
    const client = await this.client(flags.hub)
    const route = `${agentRoute(args.agent, projectId)}/logs`
    // The Hub renders the output through a terminal emulator: what a person saw on the screen.
    if (!flags.follow) return {logs: await client.call<string>('GET', flags.raw ? `${route}?raw=true` : route, undefined, {headers: {accept: 'text/plain'}})}
    let failure: AppError | null = null
    // The follow stream is terminal bytes: a terminal draws them; anything else gets rendered lines.
    // Imported here: the terminal emulator is a large package every other command would load at start.
    const screen = flags.raw || process.stdout.isTTY ? null : new (await import('../../src/domain/agents/screen-render.js')).ScreenRenderer()
    let printed: Promise<void> = Promise.resolve()
    const print = (lines: string[]) => lines.length && process.stdout.write(lines.map((l) => `${l}\n`).join(''))
    const code = await runTerminal(`${client.endpoint}${route}`, {
      interactive: false,
      onError: (c, m) => (failure = new AppError(c as never, m)),
      ...(screen && {
        output: (data: Buffer) => {
          printed = printed.then(async () => {
            await screen.write(data)
            print(await screen.takeFinal())
          })
        },
      }),
    })
    if (screen) {
      await printed
      print(screen.rest())
      screen.dispose()
    }
    if (failure) throw failure
    if (code) process.exitCode = code
    return null
  }

  protected override human(result: {logs: string} | null): string | null {
    return result ? result.logs : null
  }
}
