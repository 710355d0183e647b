import type {AppError} from '../api/app-error.js'
import {paint, useColor} from './render.js'

/**
 * Writes a CLI error the one way CONTRACT.md gives, for commands (BaseCommand.catch) and for
 * failures before any command runs (an unknown command, in entry.ts): with `--json` exactly one
 * document `{"error": {code, message, details}}` on stdout, never coloured; otherwise
 * `Error: <message> (<code>)` on stderr, "Error:" red on a TTY. Usage and internal errors leave
 * the code out: the message already says what to fix.
 */
export function writeError(err: AppError, json: boolean): void {
  if (json) {
    const body = {error: {code: err.code, message: err.message, ...(err.details && {details: err.details})}}
    process.stdout.write(JSON.stringify(body, null, 2) + '\n')
    return
  }
  const code = err.code === 'usage_error' || err.code === 'internal_error' ? '' : ` (${err.code})`
  process.stderr.write(`${paint(useColor(process.stderr)).red('Error:')} ${err.message}${code}\n`)
}
