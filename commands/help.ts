import {commands} from '@oclif/plugin-help'
import {BaseCommand} from '../src/cli/base-command.js'

/**
 * `svc help [COMMAND]` is @oclif/plugin-help's command: its arguments, its `-n/--nested-commands`
 * and its rendering through oclif's Help class. svc adds only what every svc command has: the
 * global `--json` flag (test/catalogue/commands.test.ts). Help is text either way; the plugin
 * parses its own flag list, so `--json` is taken out before it does. The plugin is used as a
 * class rather than loaded as an oclif plugin: see docs/cli.md.
 */
export default class HelpCommand extends commands.help {
  static override baseFlags = BaseCommand.baseFlags
  static override description = 'Show help for svc or for one command.'

  override async run(): Promise<void> {
    this.argv = this.argv.filter((a) => a !== '--json')
    await super.run()
  }
}
