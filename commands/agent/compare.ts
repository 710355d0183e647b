import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {compareAttempts, renderAttempts, type AttemptRow} from '../../src/cli/attempts.js'

export default class AgentCompare extends BaseCommand<{group: string; attempts: AttemptRow[]}> {
  static override description = `Compare the attempts of one task side by side: per attempt its state, check, turns, cost, run time, files changed and lines added and deleted.

NAME is the name given to svc agent create NAME --attempts N (the attempts are NAME-1 ... NAME-N). The check is the last run of --check (it runs in each attempt's sandbox whenever it goes idle).`
  static override args = {name: Args.string({description: 'Name of the attempts\' group (as given to create --attempts).', required: true})}
  static override flags = {
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }
  static override examples = ['<%= config.bin %> agent compare fix', '<%= config.bin %> agent compare fix --json']

  async execute() {
    const {args, flags} = await this.parse(AgentCompare)
    const projectId = projectOrDefault(flags.project, await this.settings())
    return {group: args.name, attempts: await compareAttempts(await this.client(flags.hub), projectId, args.name)}
  }

  protected override human(r: {group: string; attempts: AttemptRow[]}): string {
    return renderAttempts(r.attempts)
  }
}
