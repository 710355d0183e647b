import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {agentsApi, type BrokerInfo} from '../../src/client/agents-client.js'

type Result = {broker: BrokerInfo; joinToken: string; expiresAt: string}

export default class BrokerRegister extends BaseCommand<Result> {
  static override description = 'Register a broker (phase one): prints a join token, valid for one hour and one use, for `svc broker start --join-token`.'
  static override flags = {name: Flags.string({description: 'Name of the broker.', required: true}), hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {flags} = await this.parse(BrokerRegister)
    return agentsApi(await this.client(flags.hub)).registerBroker(flags.name)
  }

  protected override human(r: Result): string {
    return `Registered broker ${r.broker.name} (${r.broker.id}).\nJoin token (one use, expires ${r.expiresAt}):\n${r.joinToken}`
  }
}
