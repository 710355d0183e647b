import {flush, run} from '@oclif/core'
import {COMMANDS} from './commands.js'
import {embeddedOclifOptions} from './embedded-config.js'
import {writeError} from './error-output.js'
import {exitCodeOf} from './exit-codes.js'
import {unknownCommandError} from './suggest.js'
import {toAppError} from './base-command.js'
import {commandIdsOf} from './command-ids.js'

export {COMMANDS}

type LoadCommands = (ids?: string[]) => Promise<void>

/**
 * The dev bundle's COMMANDS holds its classes lazily (scripts/dev-lazy-registry.mjs): the ones
 * this argv runs are imported before oclif looks for them. In source (tests) and in the
 * executable COMMANDS is complete, and there is no loader.
 */
async function loadCommandsFor(argv: string[]): Promise<void> {
  const load = (COMMANDS as unknown as Record<symbol, LoadCommands | undefined>)[Symbol.for('svc.loadCommands')]
  if (load) await load(commandIdsOf(argv, Object.keys(COMMANDS)))
}

/**
 * Runs the CLI. Errors outside a command (an unknown command, with its "did you mean") use the
 * same envelope and exit codes as a command's.
 */
export async function main(argv: string[]): Promise<void> {
  try {
    await loadCommandsFor(argv)
    // The single executable carries package.json data and the command table in memory.
    await run(argv, (await embeddedOclifOptions()) ?? import.meta.url)
    await flush()
  } catch (err) {
    const e = (err as {oclif?: {exit?: number}})?.oclif?.exit === 0 ? null : err
    if (!e) return
    // oclif's "command agnet:list not found" (from the runner or from `svc help <words>`).
    const unknown = /command (\S+) not found/i.exec((e as Error)?.message ?? '')?.[1]
    const appErr = unknown ? unknownCommandError(unknown.replace(/\.$/, ''), Object.keys(COMMANDS), {viaHelp: argv[0] === 'help'}) : toAppError(e)
    process.exitCode = exitCodeOf(appErr)
    writeError(appErr, argv.includes('--json'))
  }
}
