import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {reviewApi, type MergeResult} from '../../src/client/review-client.js'

export default class AgentMerge extends BaseCommand<MergeResult> {
  static override description =
    'Land an agent\'s work on its base branch in the project\'s checkout: what it left uncommitted is committed first (author the agent, committer you, its message the first line of the agent\'s task; the agent\'s own repository is not changed), that work becomes the branch svc/<name> in the checkout, then it is merged (a merge commit, the default here as on the web) or squashed into one commit. You are who your git says: user.name and user.email as git config in the checkout resolves them (else your name and e-mail on the Hub). A conflict, a dirty checkout or a moved base refuses and changes nothing.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    squash: Flags.boolean({description: 'Land the work as one commit instead of a merge commit.'}),
    message: Flags.string({char: 'm', description: 'Message of the merge or squash commit.'}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }
  static override examples = ['<%= config.bin %> agent merge alice', '<%= config.bin %> agent merge alice --squash -m "Add the parser"']

  async execute() {
    const {args, flags} = await this.parse(AgentMerge)
    const projectId = projectOrDefault(flags.project, await this.settings())
    return reviewApi(await this.client(flags.hub)).merge(projectId, args.agent, {strategy: flags.squash ? 'squash' : 'merge', ...(flags.message && {message: flags.message})})
  }

  protected override human(r: MergeResult): string {
    return `${r.strategy === 'squash' ? 'Squashed' : 'Merged'} ${r.branch} into ${r.baseRef}: ${r.commit.slice(0, 12)} (${r.files.length} file${r.files.length === 1 ? '' : 's'})`
  }
}
