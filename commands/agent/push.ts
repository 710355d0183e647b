import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {reviewApi, type PushResult} from '../../src/client/review-client.js'

export default class AgentPush extends BaseCommand<PushResult> {
  static override description = 'Push an agent\'s branch to the project\'s remote with the broker user\'s own git credentials and print where it went. What the agent left uncommitted is pushed as a commit on top (its own repository is not changed); with a checkout on the broker the branch is pushed from there and stays in it as svc/<name>.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(AgentPush)
    const projectId = projectOrDefault(flags.project, await this.settings())
    return reviewApi(await this.client(flags.hub)).push(projectId, args.agent)
  }

  protected override human(r: PushResult): string {
    return `Pushed ${r.branch} (${r.commit.slice(0, 12)}) to ${r.remote}: ${r.url}`
  }
}
