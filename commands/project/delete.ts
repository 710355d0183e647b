import {Args, Flags} from '@oclif/core'
import {AppError} from '../../src/api/app-error.js'
import {BaseCommand} from '../../src/cli/base-command.js'
import {confirm} from '../../src/cli/prompt.js'
import type {Project} from '../../src/client/hub-client.js'

export default class ProjectDelete extends BaseCommand<{project: Project}> {
  static override description = 'Delete a project (owners only). Asks for confirmation unless --yes.'
  static override args = {project: Args.string({description: 'Project ID or slug.', required: true})}
  static override flags = {
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation.'}),
    hub: Flags.string({description: 'Hub URL.'}),
  }

  async execute() {
    const {args, flags} = await this.parse(ProjectDelete)
    if (!flags.yes) {
      if (!(await this.canPrompt())) {
        throw new AppError('interactive_required', 'deleting a project needs confirmation: pass --yes (prompts are off: --json, no TTY, or cli.interactive_disabled)')
      }
      if (!(await confirm(`Delete project ${args.project}? Its agents and members go with it.`))) throw new AppError('usage_error', 'not confirmed; nothing was deleted')
    }
    return (await this.client(flags.hub)).deleteProject(args.project)
  }

  protected override human({project}: {project: Project}): string {
    return `Deleted project ${project.name} (${project.id}).`
  }
}
