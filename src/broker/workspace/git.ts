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
  /**
   * The command reads files an agent could have written (its work tree, its objects, its index):
   * git then runs hardened (UNTRUSTED_CONFIG, untrustedEnv), so no configuration, hook, filter,
   * pager or program of anyone's but svc's can run. `cwd` must be a repository svc wrote itself.
   */
  untrusted?: boolean
}

/** Environment of every git call: never asks on a terminal, never opens an editor or a pager. */
function gitEnv(extra?: Record<string, string>): NodeJS.ProcessEnv {
  return {...process.env, GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_PAGER: 'cat', PAGER: 'cat', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C', ...extra}
}

/**
 * Settings on the command line of every untrusted call. They outrank any repository's own
 * config, and the environment below drops the system and global files, so together nothing
 * names a program git would run: fsmonitor, hooks, pager, external diff, ssh, editor, askpass.
 * Filters, textconv and merge drivers are named by attributes but defined only in config, which
 * is svc's own in the repositories these calls use (agent-repo.ts), so they stay undefined.
 */
export const UNTRUSTED_CONFIG = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.editor=true',
  'core.askPass=',
  'core.sshCommand=false',
  'core.attributesFile=/dev/null',
  'core.untrackedCache=false',
  'core.splitIndex=false',
  'diff.external=',
  'credential.helper=',
  'protocol.allow=never',
  'protocol.file.allow=always',
  'commit.gpgSign=false',
  'gc.auto=0',
  'maintenance.auto=false',
].flatMap((c) => ['-c', c])

/**
 * The broker's environment without anything git reads from it (GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH,
 * an ssh command, an askpass program, ...), plus no system or global config at all.
 */
function untrustedEnv(extra?: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^(GIT_|SSH_ASKPASS|EDITOR|VISUAL|PAGER|LESS)/.test(k)) env[k] = v
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    LC_ALL: 'C',
    ...extra,
  }
}

/** Subcommands that talk to a remote, so may run ssh. */
const NETWORK = new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote'])

/**
 * The ssh command git is to use, with `-o BatchMode=yes`: GIT_TERMINAL_PROMPT=0 does not reach
 * ssh, which would otherwise ask on the broker's terminal (unknown host key, key passphrase) and
 * hold the git call until its timeout. BatchMode makes ssh fail at once instead; on the command
 * line ssh takes an option's first value, so a user's own `-o BatchMode=no` still wins.
 * The command it adds to is the one git would pick (GIT_SSH_COMMAND, then `core.sshCommand`,
 * then GIT_SSH, then ssh): setting GIT_SSH_COMMAND overrides the config, so a configured command
 * (a deploy key, say) is looked up and kept. Only for subcommands that talk to a remote: for the
 * others the environment is left alone (a lazy fetch of a partial clone keeps the user's
 * command). Undefined: leave git's choice alone (GIT_SSH names a program git calls with
 * arguments of its own, which we cannot add to).
 */
async function sshCommand(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (!NETWORK.has(args[0] ?? '')) return undefined
  if (env.GIT_SSH_COMMAND) return `${env.GIT_SSH_COMMAND} -o BatchMode=yes`
  const r = await runCommand('git', ['-C', cwd, 'config', '--get', 'core.sshCommand'], {env, timeoutMs: 10_000})
  const configured = r.code === 0 ? r.stdout.toString('utf8').trim() : ''
  if (configured) return `${configured} -o BatchMode=yes`
  return env.GIT_SSH ? undefined : 'ssh -o BatchMode=yes'
}

/** Runs `git -C cwd args`; resolves whatever the exit code. */
export async function gitRaw(args: string[], opts: GitOptions): Promise<RunResult> {
  if (opts.untrusted) {
    return runCommand('git', [...UNTRUSTED_CONFIG, '-C', opts.cwd, ...args], {env: untrustedEnv(opts.env), timeoutMs: opts.timeoutMs ?? 60_000, input: opts.input, maxStdoutBytes: opts.maxStdoutBytes})
  }
  const env = gitEnv(opts.env)
  const ssh = await sshCommand(args, opts.cwd, env)
  if (ssh) env.GIT_SSH_COMMAND = ssh
  return runCommand('git', ['-C', opts.cwd, ...args], {env, timeoutMs: opts.timeoutMs ?? 60_000, input: opts.input, maxStdoutBytes: opts.maxStdoutBytes})
}

/** Runs git and answers its stdout (trimmed of the final newline); a non-zero exit throws GitError. */
export async function git(args: string[], opts: GitOptions): Promise<string> {
  const r = await gitRaw(args, opts)
  if (r.code !== 0) throw new GitError(`git ${args[0]} failed: ${r.stderr || `exit code ${r.code}`}`, r)
  return r.stdout.toString('utf8').replace(/\n$/, '')
}
