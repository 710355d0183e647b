import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {table, useColor} from '../../src/cli/render.js'
import {agentsApi, type BrokerInfo} from '../../src/client/agents-client.js'

export default class BrokerList extends BaseCommand<{brokers: BrokerInfo[]}> {
  static override description = 'List runtime brokers with their status and load.'
  static override flags = {hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {flags} = await this.parse(BrokerList)
    return agentsApi(await this.client(flags.hub)).listBrokers()
  }

  protected override human({brokers}: {brokers: BrokerInfo[]}): string {
    if (brokers.length === 0) return 'No brokers.'
    return table(['name', 'status', 'agents', 'runtimes', 'id'], brokers.map((b) => [b.colocated ? `${b.name} (co-located)` : b.name, b.connected ? 'online' : b.status, b.agents, b.runtimes.join(','), b.id]), useColor())
  }
}
