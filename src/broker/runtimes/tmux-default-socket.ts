import {realpathSync} from 'node:fs'
import net from 'node:net'
import {join} from 'node:path'

/**
 * Whether a tmux server may be listening on the default socket (where an older svc's sessions
 * are, local-tmux.ts). Every agent start asks, and a `tmux has-session` there is a process spawned
 * from the broker's event loop; a connect() to the socket answers the usual case (no server: the
 * file is missing, or left by a server that exited and refuses) with no process. tmux puts the
 * socket at `<TMUX_TMPDIR, else /tmp>/tmux-<uid>/default`. Anything else (a server accepted, an
 * unexpected error, no answer within a second) answers true, and tmux is asked as before.
 */
export function defaultServerMayRun(env: NodeJS.ProcessEnv): Promise<boolean> {
  const uid = process.getuid?.()
  if (uid === undefined) return Promise.resolve(true)
  let path: string
  try {
    path = join(realpathSync(env.TMUX_TMPDIR || '/tmp'), `tmux-${uid}`, 'default')
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
