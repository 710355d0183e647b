/**
 * Pure builders of tmux argv. Every element goes to tmux through execFile (no shell), but tmux
 * itself treats an argument that ends in `;` as a command separator, so untrusted values (env
 * values, command arguments, literal keys) pass through `tmuxArg` first.
 */
import type {KeyInput} from '../runtime.js'
import {canonicalKey, NAMED_KEYS} from './keys.js'

/**
 * Escapes one argv element for tmux: a trailing `;` becomes `\;`, which tmux turns back into a
 * literal `;` (only the final character is examined, so `x\;` → `x\\;` → `x\;`).
 */
export function tmuxArg(value: string): string {
  return value.endsWith(';') ? `${value.slice(0, -1)}\\;` : value
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/

/**
 * The tmux socket name (`tmux -L svc`) of the local runtime's server: agents' sessions live on a
 * server of svc's own, under TMUX_TMPDIR like any tmux socket, and never in the user's `tmux ls`.
 * See them with `tmux -L svc ls`, attach by hand with `tmux -L svc attach -t svc-<agent id>`.
 */
export const SVC_TMUX_SOCKET = 'svc'

/** The tmux session (or container) name of an agent; refuses IDs that are not plain tokens. */
export function sessionNameFor(agentId: string): string {
  if (!SAFE_ID.test(agentId)) {
    throw new Error(`agent ID ${JSON.stringify(agentId)} cannot name a session: use letters, digits, '-' and '_' (at most 63)`)
  }
  return `svc-${agentId}`
}

/** Target of the session's active pane; `=` asks for the exact session name, not a prefix. */
export function paneTarget(session: string): string {
  return `=${session}:`
}

export function checkEnvKey(key: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`environment variable name ${JSON.stringify(key)} is not valid`)
}

/**
 * tmux runs a single-element command through `sh -c`; more elements are exec'd directly. A lone
 * element is therefore routed through `env` so it is never interpreted by a shell.
 */
export function directCommand(command: string[]): string[] {
  if (command.length === 0) throw new Error('the harness command is empty')
  return command.length === 1 ? ['env', '--', command[0]] : command
}

/** A chained command separator for tmux argv. */
export const SEP = ';'

export interface NewSessionOptions {
  session: string
  cols: number
  rows: number
  env: Record<string, string>
  command: string[]
  workdir?: string
  /** When set, the pane's output is appended to this file (pipe-pane). */
  logFile?: string
  /**
   * When set, `env` is not put on tmux's argv: the command starts through ENV_LOADER, which
   * reads this file (written by envFileContent) and deletes it. A tmux server keeps the argv of
   * the client that started it for its whole life, visible to every user in `ps`: no tokens there.
   */
  envFile?: string
  /**
   * With `envFile`: the command starts with an environment of TERM alone and reads the file's
   * variables from fd 3 itself (ENV_FD_LOADER), so the harness gets those and TERM only, never
   * the tmux server's (which is the broker's).
   */
  cleanEnv?: boolean
}

/** sh script run as `sh -c ENV_LOADER <envFile> <command...>`: exports the file's variables, removes it, execs the command. */
export const ENV_LOADER = 'set -a; . "$0" || exit 127; set +a; rm -f -- "$0"; exec "$@"'

/**
 * sh script run as `sh -c ENV_FD_LOADER <envFile> <command...>`, for a command that reads its
 * variables from fd 3 itself (the sandbox's launcher, sandbox/launcher.ts): opens the file on fd
 * 3, removes it (in the background: nothing waits for `rm`), and execs the command with an
 * environment of TERM alone. A pane inherits the tmux server's environment, which is the
 * broker's (the Hub's, for the co-located broker); TERM is set by tmux for the pane. `env -i`
 * here, not bwrap's `--clearenv`: bwrap's own first process inside the sandbox (its PID 1, whose
 * /proc/1/environ the agent can read) keeps the environment bwrap was started with.
 */
export const ENV_FD_LOADER = `exec 3< "$0" || exit 127; rm -f -- "$0" & exec env -i TERM="\${TERM:-screen}" "$@"`

/**
 * The two halves of lowering the CPU priority of the agent's session to nice value `n` (a number,
 * or `"$0"`), then running the command (`"$@"`). Linux with autogroups (the default of desktop
 * kernels) shares the CPU between sessions, not processes, so a plain `nice` would only rank a
 * process within its own session: the session's autogroup gets the nice value instead (raising a
 * nice value needs no privilege). Each tmux pane is a session of its own, so this covers the
 * harness and everything it runs; harness hooks, which Claude Code starts in sessions of their
 * own, and the Hub keep full priority. The kernel lets a process without CAP_SYS_ADMIN (a
 * sandboxed agent) set an autogroup's nice value once per 100 ms for the whole machine, so agents
 * started together retry for up to 3 s. Without autogroups, or if that fails, `nice` does it per
 * process. The sandbox's launcher runs other work between the halves (sandbox/launcher.ts).
 *
 * `apply` runs in a shell function that declares `locals` (its variables) `local`, and whose
 * status says whether the autogroup took the value (`niced`); `exec` runs after it returned:
 * the agent's environment is the shell's, so a variable of the agent's that happens to share a
 * name with one of these reaches the harness as the agent set it.
 */
export function niceScript(n: string): {locals: string; apply: string; niced: string; exec: string} {
  return {
    locals: 'svc_on svc_i svc_niced',
    apply: `svc_on=; { read svc_on < /proc/sys/kernel/sched_autogroup_enabled; } 2>/dev/null; svc_i=0; svc_niced=; while [ "$svc_on" = 1 ] && [ $svc_i -lt 30 ]; do if { echo ${n} > /proc/self/autogroup; } 2>/dev/null; then svc_niced=1; break; fi; svc_i=$((svc_i + 1)); sleep 0.1; done`,
    niced: '[ -n "$svc_niced" ]',
    exec: `exec nice -n ${n} "$@"`,
  }
}

const nice0 = niceScript('"$0"')
/** sh script run as `sh -c NICE_LOADER <nice> <command...>`: niceScript's two halves. */
export const NICE_LOADER = `svc_nice() { local ${nice0.locals}; ${nice0.apply}; ${nice0.niced}; }; svc_nice && exec "$@"; ${nice0.exec}`

/** The command behind NICE_LOADER, or as it is when `nice` is 0. */
export function niceCommand(command: string[], nice: number): string[] {
  return nice > 0 ? ['/bin/sh', '-c', NICE_LOADER, String(nice), ...command] : command
}

/** The env file for ENV_LOADER: one `NAME='value'` line per variable. */
export function envFileContent(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => {
      checkEnvKey(k)
      return `${k}=${shellQuote(v)}\n`
    })
    .join('')
}

/**
 * `new-session` chained (in one tmux invocation, so no output is missed) with remain-on-exit
 * (a finished harness leaves its last screen and a dead pane rather than vanishing) and
 * pipe-pane into the log file.
 */
export function newSessionArgs(o: NewSessionOptions): string[] {
  const target = paneTarget(o.session)
  const args = ['new-session', '-d', '-s', o.session, '-x', String(o.cols), '-y', String(o.rows)]
  if (o.workdir) args.push('-c', tmuxArg(o.workdir))
  if (o.envFile) {
    for (const k of Object.keys(o.env)) checkEnvKey(k)
    args.push('--', ...['/bin/sh', '-c', o.cleanEnv ? ENV_FD_LOADER : ENV_LOADER, o.envFile, ...directCommand(o.command)].map(tmuxArg))
  } else {
    for (const [k, v] of Object.entries(o.env)) {
      checkEnvKey(k)
      args.push('-e', tmuxArg(`${k}=${v}`))
    }
    args.push('--', ...directCommand(o.command).map(tmuxArg))
  }
  args.push(SEP, 'set-option', '-w', '-t', target, 'remain-on-exit', 'on')
  // pipe-pane expands formats in its command: `#` is doubled so a path is taken as written.
  if (o.logFile) args.push(SEP, 'pipe-pane', '-o', '-t', target, `cat >> ${shellQuote(o.logFile).replace(/#/g, '##')}`)
  return args
}

/**
 * Keeps svc's tmux server running while the broker's process `brokerPid` lives: a server whose
 * last session ended exits (tmux's `exit-empty`), so an agent started after it paid for a new
 * server (~15-20 ms of its start here; the bench deletes each agent before the next). With
 * `exit-empty off` the server stays, empty, and a background job of its own (`run-shell -b`,
 * which runs with TMUX naming that server) turns it back on once the broker's process is gone,
 * so no server outlives its broker by more than a second (GNU tail polls --pid every second).
 * Where tail has no --pid (busybox) the job ends at once and tmux behaves as before.
 */
export function keepServerArgs(tmux: string, brokerPid: number): string[] {
  if (!Number.isSafeInteger(brokerPid) || brokerPid <= 1) throw new Error(`not a process ID: ${brokerPid}`)
  // run-shell expands formats in its command: `#` is doubled so the path is taken as written.
  const job = `cd / && tail --pid=${brokerPid} -f /dev/null 2>/dev/null; ${shellQuote(tmux).replace(/#/g, '##')} set-option -s exit-empty on`
  return ['set-option', '-s', 'exit-empty', 'off', SEP, 'run-shell', '-b', job]
}

/** POSIX single-quoting, for the one place tmux wants a shell command (pipe-pane). */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/** argv of `send-keys` for one named key or one literal string. */
export function sendKeysArgs(target: string, input: KeyInput): string[] {
  if ('key' in input) {
    const key = canonicalKey(input.key)
    if (!key) throw new Error(`unknown key ${JSON.stringify(input.key)}: use one of ${NAMED_KEYS.join(', ')}, or send it as a literal string`)
    return ['send-keys', '-t', target, key]
  }
  if (input.literal === '') throw new Error('the literal string to send is empty')
  return ['send-keys', '-t', target, '-l', '--', tmuxArg(input.literal)]
}

/** argv of `capture-pane` printing the pane's visible text. */
export function captureArgs(target: string): string[] {
  return ['capture-pane', '-p', '-t', target]
}

/** `load-buffer` from stdin, then a bracketed paste that deletes the buffer. */
export function pasteArgs(target: string, buffer: string): string[] {
  return ['load-buffer', '-b', buffer, '-', SEP, 'paste-buffer', '-p', '-d', '-b', buffer, '-t', target]
}

/**
 * `set-buffer` with the text as an argument, then the bracketed paste: for exec channels that
 * cannot close stdin (the Kubernetes v4 exec protocol).
 */
export function pasteFromArgArgs(target: string, buffer: string, text: string): string[] {
  return ['set-buffer', '-b', buffer, '--', tmuxArg(text), SEP, 'paste-buffer', '-p', '-d', '-b', buffer, '-t', target]
}

/** Hex arguments for `send-keys -H`, chunked so a control-mode command line stays short. */
export function hexKeyCommands(target: string, data: Buffer, chunk = 256): string[] {
  const lines: string[] = []
  for (let i = 0; i < data.length; i += chunk) {
    const hex = Array.from(data.subarray(i, i + chunk), (b) => b.toString(16).padStart(2, '0'))
    lines.push(`send-keys -t ${target} -H ${hex.join(' ')}`)
  }
  return lines
}
