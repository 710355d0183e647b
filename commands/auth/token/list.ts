import {Flags} from '@oclif/core'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {table, useColor} from '../../../src/cli/render.js'
import type {AccessTokenView} from '../../../src/client/hub-client.js'

export default class TokenList extends BaseCommand<{tokens: AccessTokenView[]}> {
  static override description = 'List your user access tokens (never their secrets).'
  static override flags = {hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {flags} = await this.parse(TokenList)
    return (await this.client(flags.hub)).listTokens()
  }

  protected override human({tokens}: {tokens: AccessTokenView[]}): string {
    if (tokens.length === 0) return 'No access tokens.'
    return table(
      ['id', 'name', 'prefix', 'project', 'status', 'expires'],
      tokens.map((t) => [t.id, t.name, t.prefix, t.projectId, t.status, t.expiresAt]),
      useColor(),
    )
  }
}
