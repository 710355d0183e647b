import {flush, run} from '@oclif/core'
import {AppError} from '../api/app-error.js'
import {COMMANDS} from './commands.js'
import {embeddedOclifOptions} from './embedded-config.js'
import {exitCodeOf} from './exit-codes.js'
import {toAppError} from './base-command.js'

export {COMMANDS}

/** Runs the CLI. Errors outside a command (an unknown command) use the same envelope and codes. */
export async function main(argv: string[]): Promise<void> {
  try {
    // The single executable carries package.json data and the command table in memory.
    await run(argv, (await embeddedOclifOptions()) ?? import.meta.url)
    await flush()
  } catch (err) {
    const e = (err as {oclif?: {exit?: number}})?.oclif?.exit === 0 ? null : err
    if (!e) return
    let appErr = toAppError(e)
    if (/command .* not found/i.test(appErr.message)) appErr = new AppError('usage_error', `${appErr.message.replace(/^.*command/i, 'command')}; see \`svc help\``)
    process.exitCode = exitCodeOf(appErr)
    if (argv.includes('--json')) process.stdout.write(JSON.stringify({error: {code: appErr.code, message: appErr.message}}, null, 2) + '\n')
    else process.stderr.write(`Error: ${appErr.message}\n`)
  }
}
