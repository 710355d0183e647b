import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {fields} from '../../src/cli/render.js'
import {agentsApi, type BrokerInfo} from '../../src/client/agents-client.js'

export default class BrokerGet extends BaseCommand<{broker: BrokerInfo}> {
  static override description = 'Show a runtime broker: status, capacity in use, capabilities.'
  static override args = {id: Args.string({description: 'Broker ID.', required: true})}
  static override flags = {hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {args, flags} = await this.parse(BrokerGet)
    return agentsApi(await this.client(flags.hub)).getBroker(args.id)
  }

  protected override human({broker: b}: {broker: BrokerInfo}): string {
    return fields([
      ['Name', b.name],
      ['ID', b.id],
      ['Status', b.connected ? 'online' : b.status],
      ['Co-located', b.colocated ? 'yes' : 'no'],
      ['Agents', b.agents],
      ['Runtimes', b.runtimes.join(', ')],
      ['Capabilities', b.capabilities.join(', ')],
      ['Version', b.version],
      ['Last seen', b.lastSeenAt],
    ])
  }
}
