import {Args, Flags} from '@oclif/core'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {settingDef} from '../../../src/cli/project-setting-keys.js'
import {projectOf} from '../../../src/cli/project-ref.js'
import {fields} from '../../../src/cli/render.js'
import {PROJECT_SETTINGS} from '../../../src/domain/project-settings/registry.js'

type Result = {settings: Record<string, unknown>}

export default class ProjectSettingsGet extends BaseCommand<Result> {
  static override description = 'Show the project\'s settings (svc/ annotations): all of them, or one.'
  static override args = {key: Args.string({description: 'One setting, e.g. default-max-turns.'})}
  static override flags = {project: Flags.string({description: 'Project ID or slug (default: the current project).'}), hub: Flags.string({description: 'Hub URL.'})}

  async execute(): Promise<Result> {
    const {args, flags} = await this.parse(ProjectSettingsGet)
    const def = args.key ? settingDef(args.key) : null
    const id = encodeURIComponent(projectOf(flags.project, await this.settings()))
    const res = await (await this.client(flags.hub)).call<Result>('GET', `/api/v1/projects/${id}/settings`)
    return def ? {settings: {[def.field]: res.settings[def.field]}} : res
  }

  protected override human({settings}: Result): string {
    const show = (v: unknown) => (v === null || v === undefined ? '(not set)' : typeof v === 'object' ? JSON.stringify(v) : String(v))
    return fields(PROJECT_SETTINGS.filter((d) => d.field in settings).map((d) => [d.key.slice(4), show(settings[d.field])] as [string, string]))
  }
}
