import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {cliValue, settingDef} from '../../../src/cli/project-setting-keys.js'
import {projectOf} from '../../../src/cli/project-ref.js'

type Result = {settings: Record<string, unknown>}

export default class ProjectSettingsSet extends BaseCommand<Result> {
  static override description = 'Set one project setting (project admins and owners).'
  static override examples = ['<%= config.bin %> project settings set default-max-turns 40', "<%= config.bin %> project settings set default-resources '{\"cpu\":\"2\"}'"]
  static override args = {
    key: Args.string({description: 'Setting, e.g. default-model.', required: true}),
    value: Args.string({description: 'Value.', required: true}),
  }
  static override flags = {project: Flags.string({description: 'Project ID or slug (default: the current project).'}), hub: Flags.string({description: 'Hub URL.'})}

  async execute(): Promise<Result> {
    const {args, flags} = await this.parse(ProjectSettingsSet)
    const def = settingDef(args.key)
    const id = encodeURIComponent(projectOf(flags.project, await this.settings()))
    return (await this.client(flags.hub)).call<Result>('PUT', `/api/v1/projects/${id}/settings`, {[def.field]: cliValue(def, args.value)})
  }

  protected override human(): string {
    return 'Saved.'
  }
}
