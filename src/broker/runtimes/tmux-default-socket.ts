import {realpathSync} from 'node:fs'
import net from 'node:net'
import {join} from 'node:path'

/**
 * Whether a tmux server may be listening on the socket `label` (`-L`; `default`: where an older
 * svc's sessions are, local-tmux.ts). Every agent start asks whether its session exists, and a
 * `tmux has-session` is a process forked from the broker's event loop; a connect() to the socket
 * answers the usual case (no server: the file is missing, or left by a server that exited and
 * refuses) with no process. tmux puts the socket at `<TMUX_TMPDIR, else /tmp>/tmux-<uid>/<label>`.
 * Anything else (a server accepted, an unexpected error, no answer within a second) answers
 * true, and tmux is asked as before.
 */
export function tmuxServerMayRun(env: NodeJS.ProcessEnv, label: string): Promise<boolean> {
  const uid = process.getuid?.()
  if (uid === undefined) return Promise.resolve(true)
  let path: string
  try {
    path = join(realpathSync(env.TMUX_TMPDIR || '/tmp'), `tmux-${uid}`, label)
  } catch {
    return Promise.resolve(true)
  }
  return new Promise((resolve) => {
    const socket = net.connect({path})
    const done = (running: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(running)
    }
    const timer = setTimeout(() => done(true), 1000)
    socket.once('connect', () => done(true))
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code !== 'ENOENT' && err.code !== 'ECONNREFUSED'))
  })
}

export const defaultServerMayRun = (env: NodeJS.ProcessEnv) => tmuxServerMayRun(env, 'default')
