// Entry of dist/quick.js: bin/run.js (and the executable's sea-main.ts) try it first for
// `svc agent create ...`, which every agent's start waits for. It runs the command without
// oclif when quick-agent-create.ts is sure how oclif would read the argv, through the same code
// as the command class (agent-create-run.ts, command-context.ts): same request, output, errors
// and exit codes. Otherwise it answers false and the caller runs the CLI as always.
import {isatty} from 'node:tty'
import {AppError} from '../api/app-error.js'
import {createAgent, createdText} from './agent-create-run.js'
import {CommandContext, usageHint} from './command-context.js'
import {parseAgentCreate} from './quick-agent-create.js'

/** commands/agent/create.ts's id and args, for the usage line after a failure (tested against the class). */
export const AGENT_CREATE_USAGE = {bin: 'svc', id: 'agent:create', args: {name: {required: true}, task: {required: false}}}

/** Runs `argv` when it is a command the quick path takes (true), else does nothing (false). */
export async function main(argv: string[]): Promise<boolean> {
  if (argv[0] !== 'agent' || argv[1] !== 'create') return false
  // isatty(0), not process.stdin.isTTY: the same answer (stdin is a tty.ReadStream exactly when
  // fd 0 is a terminal) without making the stream, which loads tty, net or fs streams (~9 ms of
  // a create's CPU, in a profile of the quick bundle).
  const parsed = parseAgentCreate(argv.slice(2), isatty(0))
  if (!parsed) return false
  // As oclif's command does: a reader that went away (`| head`) is no failure of the create.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err
  })
  const ctx = new CommandContext(parsed.json)
  try {
    ctx.print(await createAgent(ctx, parsed.args, parsed.flags), createdText)
  } catch (err) {
    // As BaseCommand.catch: a parse error cannot happen past this point, anything else is kept or internal.
    const e = err instanceof AppError ? err : new AppError('internal_error', (err as Error)?.message ?? String(err))
    await ctx.fail(e, () => usageHint(AGENT_CREATE_USAGE.bin, AGENT_CREATE_USAGE.id, AGENT_CREATE_USAGE.args))
  }
  return true
}
