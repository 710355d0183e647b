import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../../src/cli/base-command.js'
import type {AccessTokenView} from '../../../src/client/hub-client.js'

export default class TokenRevoke extends BaseCommand<{token: AccessTokenView}> {
  static override description = 'Revoke a user access token at once.'
  static override args = {id: Args.string({description: 'Token ID.', required: true})}
  static override flags = {hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {args, flags} = await this.parse(TokenRevoke)
    return (await this.client(flags.hub)).revokeToken(args.id)
  }

  protected override human({token}: {token: AccessTokenView}): string {
    return `Revoked token ${token.name} (${token.id}).`
  }
}
