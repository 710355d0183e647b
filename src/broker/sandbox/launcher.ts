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

/** The script, run as `sh -c <script> svc-sandbox <harness argv...>`. */
export function launcherScript(p: LauncherParts): string {
  const lines = [ENV_FROM_FD]
  if (p.forwarders?.start) lines.push(p.forwarders.start)
  // While the forwarders load: the priority (its 100 ms retries, when agents start together, overlap them too).
  const nice = p.nice > 0 ? niceScript(String(p.nice)) : undefined
  if (nice) lines.push(nice.apply)
  if (p.forwarders?.wait) lines.push(p.forwarders.wait)
  lines.push(nice ? nice.exec : 'exec "$@"')
  return lines.join('\n')
}
