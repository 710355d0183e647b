import {Args, Flags} from '@oclif/core'
import {AppError} from '../src/api/app-error.js'
import {BaseCommand} from '../src/cli/base-command.js'
import {projectOrDefault} from '../src/cli/project-ref.js'
import {agentRoute} from '../src/client/agents-client.js'

/** `delivery: 'queued'`: the agent's broker is away; the Hub delivers it when the broker returns. */
type Result = {messageId: string; messageIds?: string[]; delivery?: string}

/** `--raw` in any form (`--raw`, `--raw=x`, `--RAW`), refused before parsing or any request. */
export const RAW_FLAG = /^--raw(=.*)?$/i

export default class Message extends BaseCommand<Result> {
  static override description = `Send a message to an agent, or with --broadcast to every running agent of a project.

The message is pasted into the agent's terminal and Enter pressed. --plain types it as keystrokes instead of a paste; --interrupt first sends the harness's interrupt key. Raw input was removed: use \`svc keys\` to send keystrokes.`
  static override examples = ['<%= config.bin %> message demo "please run the tests"', '<%= config.bin %> message demo "stop and summarise" --interrupt', '<%= config.bin %> message --broadcast acme "standup in 5 minutes"']
  static override args = {
    target: Args.string({description: 'Agent name or ID (with --broadcast: the project).', required: true}),
    text: Args.string({description: 'The message.', required: true}),
  }
  static override flags = {
    broadcast: Flags.boolean({description: 'Send to every running agent of the project named by TARGET.'}),
    interrupt: Flags.boolean({description: 'Interrupt the agent before delivering.'}),
    plain: Flags.boolean({description: 'Type the message as keystrokes rather than a bracketed paste.'}),
    project: Flags.string({description: 'Project ID or slug of the agent.', exclusive: ['broadcast']}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<Result> {
    if (this.argv.some((a) => RAW_FLAG.test(a))) {
      throw new AppError('usage_error', '--raw was removed: raw input is no longer sent as a message; use `svc keys <agent> <key-or-literal>`')
    }
    const {args, flags} = await this.parse(Message)
    const client = await this.client(flags.hub)
    const body = {message: args.text, ...(flags.interrupt && {interrupt: true}), ...(flags.plain && {plain: true})}
    if (flags.broadcast) return client.call<Result>('POST', `/api/v1/projects/${encodeURIComponent(args.target)}/broadcast`, body)
    return client.call<Result>('POST', `${agentRoute(args.target, projectOrDefault(flags.project, await this.settings()))}/message`, body)
  }

  protected override human(r: Result): string {
    if (r.messageIds) return `Broadcast ${r.messageId} to ${r.messageIds.length} agent${r.messageIds.length === 1 ? '' : 's'}.`
    return r.delivery === 'queued' ? `Queued message ${r.messageId}: the agent's broker is away; it is delivered when the broker returns.` : `Sent message ${r.messageId}.`
  }
}
