import {Args, loadHelpClass} from '@oclif/core'
import {BaseCommand} from '../src/cli/base-command.js'

export default class HelpCommand extends BaseCommand<null> {
  static override description = 'Show help for svc or for one command.'
  static override strict = false
  static override args = {command: Args.string({description: 'Command to show help for, e.g. "project list".', required: false})}

  async execute(): Promise<null> {
    const {argv} = await this.parse(HelpCommand)
    const Help = await loadHelpClass(this.config)
    await new Help(this.config, this.config.pjson.oclif.helpOptions ?? {}).showHelp((argv as string[]).filter((a) => a !== '--json'))
    return null
  }

  protected override human(): null {
    return null
  }
}
