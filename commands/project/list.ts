import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {table, useColor} from '../../src/cli/render.js'
import type {Project} from '../../src/client/hub-client.js'

export default class ProjectList extends BaseCommand<{projects: Project[]}> {
  static override description = 'List the projects you can access.'
  static override flags = {hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {flags} = await this.parse(ProjectList)
    return (await this.client(flags.hub)).listProjects()
  }

  protected override human({projects}: {projects: Project[]}): string {
    if (projects.length === 0) return 'No projects. Register one with `svc project register`.'
    return table(['id', 'name', 'slug', 'role', 'git remote'], projects.map((p) => [p.id, p.name, p.slug, p.role, p.gitRemote]), useColor())
  }
}
