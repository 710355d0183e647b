/**
 * Listing an svc tmux server's panes (LocalTmuxRuntime.areRunning): one call for every agent's
 * session, instead of a call per agent, from the broker's liveness watch.
 */
import {CommandError, runCommand} from './run-command.js'

/** What tmux says when no server runs on its socket (so no session exists). */
// tmux's answers when no session is left: no server, or one exiting as its last session ends
// (a listing in that moment answers "no current target" or "server exited unexpectedly").
const NO_SERVER = /no server running|error connecting to|server exited unexpectedly|no current target/i

/** `session -> pane dead` of every session on a server (`base`: its socket); none without a server. */
export async function listPanes(tmux: string, env: NodeJS.ProcessEnv, base: string[]): Promise<Map<string, boolean>> {
  const r = await runCommand(tmux, [...base, 'list-panes', '-a', '-F', '#{session_name} #{pane_dead}'], {env, timeoutMs: 15_000})
  const dead = new Map<string, boolean>()
  if (r.code !== 0) {
    if (NO_SERVER.test(r.stderr)) return dead
    throw new CommandError(`listing tmux panes failed: ${r.stderr || `tmux exited with code ${r.code}`}`, r)
  }
  // The first pane of a session is the one paneTarget names (agents' sessions have one).
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const cut = line.lastIndexOf(' ')
    if (cut > 0 && !dead.has(line.slice(0, cut))) dead.set(line.slice(0, cut), line.slice(cut + 1) !== '0')
  }
  return dead
}
