import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {projectOf} from '../../src/cli/project-ref.js'
import {fields} from '../../src/cli/render.js'
import type {Project} from '../../src/client/hub-client.js'

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
      ...Object.entries(p.stats).map(([k, v]) => [k.charAt(0).toUpperCase() + k.slice(1), v] as [string, number]),
    ])
  }
}
