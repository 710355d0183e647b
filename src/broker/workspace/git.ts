/**
 * The one way this code runs git: argv arrays (never a shell string, so a branch or file name can
 * never become a command), a timeout, no prompts, no pager, and errors that say which command
 * failed and what git printed.
 */
import {runCommand, type RunResult} from '../runtimes/run-command.js'

export class GitError extends Error {
  constructor(
    message: string,
    readonly result?: RunResult,
  ) {
    super(message)
    this.name = 'GitError'
  }
}

export interface GitOptions {
  cwd: string
  timeoutMs?: number
  input?: string | Buffer
  /** Extra environment (author and committer identity, for instance). */
  env?: Record<string, string>
  /** Keeps at most this many bytes of stdout and stops git there (`RunResult.truncated`). */
  maxStdoutBytes?: number
}

/** Environment of every git call: never asks on a terminal, never opens an editor or a pager. */
function gitEnv(extra?: Record<string, string>): NodeJS.ProcessEnv {
  return {...process.env, GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_PAGER: 'cat', PAGER: 'cat', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C', ...extra}
}

/** Runs `git -C cwd args`; resolves whatever the exit code. */
export function gitRaw(args: string[], opts: GitOptions): Promise<RunResult> {
  return runCommand('git', ['-C', opts.cwd, ...args], {env: gitEnv(opts.env), timeoutMs: opts.timeoutMs ?? 60_000, input: opts.input, maxStdoutBytes: opts.maxStdoutBytes})
}

/** Runs git and answers its stdout (trimmed of the final newline); a non-zero exit throws GitError. */
export async function git(args: string[], opts: GitOptions): Promise<string> {
  const r = await gitRaw(args, opts)
  if (r.code !== 0) throw new GitError(`git ${args[0]} failed: ${r.stderr || `exit code ${r.code}`}`, r)
  return r.stdout.toString('utf8').replace(/\n$/, '')
}
