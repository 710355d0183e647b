import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {pickAttempt, type PickResult} from '../../src/cli/attempts.js'

export default class AgentPick extends BaseCommand<PickResult> {
  static override description = `Keep one attempt: merge it into its base branch in the project's checkout (as svc agent merge does), then stop and delete the other attempts of its group. Their branches svc/<name> stay in the checkout.

A refused merge (conflict, dirty checkout) changes nothing and deletes nothing.`
  static override args = {agent: Args.string({description: 'The attempt to keep: NAME-K (or its ID).', required: true})}
  static override flags = {
    squash: Flags.boolean({description: 'Land the work as one commit instead of a merge commit.'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }
  static override examples = ['<%= config.bin %> agent pick fix-2', '<%= config.bin %> agent pick fix-2 --squash']

  async execute() {
    const {args, flags} = await this.parse(AgentPick)
    const projectId = projectOrDefault(flags.project, await this.settings())
    return pickAttempt(await this.client(flags.hub), projectId, args.agent, {squash: flags.squash})
  }

  protected override human(r: PickResult): string {
    const m = r.merge
    const rest = r.deleted.length ? `\nDeleted ${r.deleted.join(', ')} (their branches are kept).` : ''
    return `${m.strategy === 'squash' ? 'Squashed' : 'Merged'} ${m.branch} into ${m.baseRef}: ${m.commit.slice(0, 12)} (${m.files.length} file${m.files.length === 1 ? '' : 's'})${rest}`
  }
}
