import {Flags} from '@oclif/core'
import {BaseCommand} from '../src/cli/base-command.js'
import {fields} from '../src/cli/render.js'
import type {Me} from '../src/client/hub-client.js'

export default class Whoami extends BaseCommand<Me> {
  static override description = 'Show who the Hub thinks you are, with which kind of credential.'
  static override examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --json']
  static override flags = {hub: Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'})}

  async execute(): Promise<Me> {
    const {flags} = await this.parse(Whoami)
    return (await this.client(flags.hub)).me()
  }

  protected override human(me: Me): string {
    const p = me.principal
    return fields([
      [p.kind === 'user' ? 'User' : p.kind === 'agent' ? 'Agent' : 'Broker', p.kind === 'user' ? `${p.displayName} <${p.email}>` : p.id],
      ['ID', p.id],
      ['Credential', me.credentialKind],
      ['System admin', me.systemAdmin ? 'yes' : 'no'],
      ...(me.token ? ([['Token project', me.token.projectId], ['Token permissions', me.token.permissions.join(', ')]] as Array<[string, string]>) : []),
    ])
  }
}
