/**
 * The sandbox's first program: one `sh` inside bwrap that takes the agent's variables from the
 * env file the pane opened on fd 3 (ENV_FD_LOADER in tmux-args.ts), starts the network's
 * forwarders (egress-plan.ts), lowers the session's CPU priority, waits for the forwarders (not
 * for Claude Code, which starts beside them: egress-plan.ts, harnessStartsLate) and execs the
 * harness. One shell does what a chain of programs did (env -i, a loader shell, rm, a
 * launcher shell, a nice shell): on a small VM each exec costs 2-3 ms of CPU, and the harness
 * waited for all of them.
 */
import {niceScript} from '../runtimes/tmux-args.js'

/**
 * The variables of the file on fd 3, exported; fd 3 is closed before anything else runs, so no
 * forwarder and no harness holds it. `/dev/fd` is bwrap's `--dev`, pointing into its own /proc.
 */
export const ENV_FROM_FD = 'set -a; . /dev/fd/3 || exit 127; set +a; exec 3<&-'

export interface LauncherParts {
  /** The forwarders' two parts (forwarderScript), when the sandbox has its own network. */
  forwarders?: {start: string; wait: string}
  /** The session's nice value (0: unchanged). */
  nice: number
}

/**
 * The script, run as `sh -c <script> svc-sandbox <harness argv...>`. Its own steps run in a
 * function whose variables are `local` (dash, bash and busybox sh have `local`), and the harness
 * is exec'd after it returned: the agent's variables are the shell's, and one that shares a name
 * with the launcher's (`svc_fw`, `svc_on`, ...) reaches the harness unchanged.
 */
export function launcherScript(p: LauncherParts): string {
  const nice = p.nice > 0 ? niceScript(String(p.nice)) : undefined
  const steps: string[] = []
  if (p.forwarders?.start) steps.push(p.forwarders.start)
  // While the forwarders load: the priority (its 100 ms retries, when agents start together, overlap them too).
  if (nice) steps.push(nice.apply)
  if (p.forwarders?.wait) steps.push(p.forwarders.wait)
  if (steps.length === 0) return `${ENV_FROM_FD}\nexec "$@"`
  const locals = [p.forwarders?.wait ? 'svc_fw' : '', nice ? nice.locals : ''].filter(Boolean).join(' ')
  // The function's status: whether the autogroup took the nice value.
  const fn = ['svc_launch() {', ...(locals ? [`local ${locals}`] : []), ...steps, nice ? nice.niced : ':', '}']
  return [ENV_FROM_FD, ...fn, nice ? `svc_launch && exec "$@"; ${nice.exec}` : 'svc_launch; exec "$@"'].join('\n')
}
