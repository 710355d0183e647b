import {Flags} from '@oclif/core'
import {approvalsTable} from '../src/cli/approval-render.js'
import {watchApprovals} from '../src/cli/approvals-watch.js'
import {BaseCommand} from '../src/cli/base-command.js'
import {approvalsApi, type Approval} from '../src/client/approvals-client.js'

export default class Approvals extends BaseCommand<{approvals: Approval[]}> {
  static override description = "List the agents' pending permission requests you may decide (decide with svc agent approve)."
  static override flags = {
    watch: Flags.boolean({char: 'w', description: 'Keep the list live until interrupted (with --json: one JSON line per new approval).'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {flags} = await this.parse(Approvals)
    const client = await this.client(flags.hub)
    const load = async () => (await approvalsApi(client).list('pending')).approvals
    if (!flags.watch) return {approvals: await load()}
    return watchApprovals(client, load, {json: this.json, redraw: !!process.stdout.isTTY})
  }

  protected override human({approvals}: {approvals: Approval[]}): string {
    return approvalsTable(approvals)
  }
}
