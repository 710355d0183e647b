import {Args, Flags} from '@oclif/core'
import {AppError} from '../src/api/app-error.js'
import {BaseCommand} from '../src/cli/base-command.js'
import {NAMED_KEY_HELP, namedKeyBytes} from '../src/cli/named-keys.js'
import {projectOrDefault} from '../src/cli/project-ref.js'
import {agentRoute} from '../src/client/agents-client.js'

type Result = {operationId: string; delivered: true}

export default class Keys extends BaseCommand<Result> {
  static override description = `Send one key or one literal string to a running agent's terminal, once.

A named key (${NAMED_KEY_HELP}) is sent as that key; anything else, or any argument with --literal, is typed as it is. Keys are delivered once: no retry, no queue; a stopped agent is not woken.`
  static override examples = ["<%= config.bin %> keys demo 'echo hi'", '<%= config.bin %> keys demo Enter', '<%= config.bin %> keys demo C-c', '<%= config.bin %> keys demo Enter --literal   # types the word Enter']
  static override args = {
    agent: Args.string({description: 'Agent name or ID.', required: true}),
    keys: Args.string({description: 'One named key or one literal string.', required: true}),
  }
  static override flags = {
    literal: Flags.boolean({description: 'Type the argument as text even when it names a key.'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute(): Promise<Result> {
    const {args, flags} = await this.parse(Keys)
    const keys = flags.literal ? args.keys : (namedKeyBytes(args.keys) ?? args.keys)
    if (keys.length === 0) throw new AppError('usage_error', 'nothing to send: give a key or a non-empty string')
    const projectId = projectOrDefault(flags.project, await this.settings())
    const client = await this.client(flags.hub)
    // An older Hub without the keys route is hub_unsupported (the client maps its "no route"
    // 404); the CLI never falls back to the message route.
    return client.call<Result>('POST', `${agentRoute(args.agent, projectId)}/keys`, {keys})
  }

  protected override human(r: Result): string {
    return `Sent (operation ${r.operationId}).`
  }
}
