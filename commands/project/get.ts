import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOf} from '../../src/cli/project-ref.js'
import {fields} from '../../src/cli/render.js'
import type {Project} from '../../src/client/hub-client.js'

/** Usage totals among the stats: shown as one `Usage` line. */
const USAGE_KEYS = new Set(['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'modelCalls', 'costUsd'])

type Result = {project: Project & {stats: Record<string, number>}}

export default class ProjectGet extends BaseCommand<Result> {
  static override description = 'Show a project with its statistics (default: the current project).'
  static override args = {project: Args.string({description: 'Project ID or slug.'})}
  static override flags = {hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {args, flags} = await this.parse(ProjectGet)
    const id = projectOf(args.project, await this.settings())
    return (await this.client(flags.hub)).getProject(id)
  }

  protected override human({project: p}: Result): string {
    return fields([
      ['Name', p.name],
      ['ID', p.id],
      ['Slug', p.slug],
      ['Git remote', p.gitRemote],
      ['Description', p.description],
      ['Your role', p.role],
      ['Created', p.createdAt],
      ...Object.entries(p.stats)
        .filter(([k]) => !USAGE_KEYS.has(k))
        .map(([k, v]) => [k.charAt(0).toUpperCase() + k.slice(1), v] as [string, number]),
      ['Usage', p.stats.modelCalls === undefined ? null : `${p.stats.inputTokens} tokens in, ${p.stats.outputTokens} out, ${p.stats.modelCalls} model calls, $${p.stats.costUsd.toFixed(2)}`],
    ])
  }
}
