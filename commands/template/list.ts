import {Flags} from '@oclif/core'
import {BaseCommand} from '../../src/cli/base-command.js'
import {table, useColor} from '../../src/cli/render.js'
import {agentsApi, type TemplateInfo} from '../../src/client/agents-client.js'

export default class TemplateList extends BaseCommand<{templates: TemplateInfo[]}> {
  static override description = 'List templates: hub-wide ones and those of projects you can access.'
  static override flags = {project: Flags.string({description: 'Only this project\'s templates.'}), hub: Flags.string({description: 'Hub URL.'})}

  async execute() {
    const {flags} = await this.parse(TemplateList)
    return agentsApi(await this.client(flags.hub)).listTemplates(flags.project)
  }

  protected override human({templates}: {templates: TemplateInfo[]}): string {
    if (templates.length === 0) return 'No templates.'
    return table(['name', 'version', 'project', 'id'], templates.map((t) => [t.name, t.currentVersion, t.projectId ?? '(hub)', t.id]), useColor())
  }
}
