import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {settingDef} from '../../../src/cli/project-setting-keys.js'
import {projectOf} from '../../../src/cli/project-ref.js'

type Result = {settings: Record<string, unknown>}

export default class ProjectSettingsUnset extends BaseCommand<Result> {
  static override description = 'Clear one project setting, so the hub default (or the coded one) applies again.'
  static override args = {key: Args.string({description: 'Setting, e.g. default-model.', required: true})}
  static override flags = {project: Flags.string({description: 'Project ID or slug (default: the current project).'}), hub: Flags.string({description: 'Hub URL.'})}

  async execute(): Promise<Result> {
    const {args, flags} = await this.parse(ProjectSettingsUnset)
    const def = settingDef(args.key)
    const id = encodeURIComponent(projectOf(flags.project, await this.settings()))
    return (await this.client(flags.hub)).call<Result>('PUT', `/api/v1/projects/${id}/settings`, {[def.field]: null})
  }

  protected override human(): string {
    return 'Cleared.'
  }
}
