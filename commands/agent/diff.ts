import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {page, renderPatch, renderStat} from '../../src/cli/diff-render.js'
import {projectOrDefault} from '../../src/cli/project-ref.js'
import {useColor} from '../../src/cli/render.js'
import {reviewApi, type AgentDiff} from '../../src/client/review-client.js'

export default class AgentDiffCommand extends BaseCommand<AgentDiff> {
  static override description = 'Show everything an agent changed since its base commit: committed or not, new files included. On a terminal it is coloured and paged.'
  static override args = {agent: Args.string({description: 'Agent name or ID.', required: true})}
  static override flags = {
    stat: Flags.boolean({description: 'Only the changed files with their added and deleted line counts.'}),
    'max-bytes': Flags.integer({description: 'Cut the patch at this many bytes (the file list stays complete).', min: 1024, max: 8 * 1024 * 1024}),
    project: Flags.string({description: 'Project ID or slug.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }
  static override examples = ['<%= config.bin %> agent diff alice', '<%= config.bin %> agent diff alice --stat', '<%= config.bin %> agent diff alice --json']
  private paged = false
  private stat = false

  async execute() {
    const {args, flags} = await this.parse(AgentDiffCommand)
    this.stat = flags.stat
    const projectId = projectOrDefault(flags.project, await this.settings())
    const diff = await reviewApi(await this.client(flags.hub)).diff(projectId, args.agent, {stat: flags.stat, maxBytes: flags['max-bytes']})
    if (!this.json && process.stdout.isTTY) {
      const color = useColor()
      this.paged = await page(flags.stat ? renderStat(diff, color) : renderPatch(diff, color))
    }
    return diff
  }

  protected override human(d: AgentDiff): string | null {
    if (this.paged) return null
    return this.stat ? renderStat(d, useColor()) : renderPatch(d, useColor())
  }
}
