import {spawn} from 'node:child_process'

export interface BrowserCommand {
  command: string
  args: string[]
}

/**
 * How this machine opens a URL, or null when it cannot. `SVC_BROWSER` wins (run by the shell
 * with the URL as its last argument, like git's `BROWSER`); otherwise `open` on macOS, `start` on
 * Windows, and `xdg-open` on other systems only when a graphical session exists (an SSH login
 * or a container has none, and there the device flow is the way in).
 */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform = process.platform): BrowserCommand | null {
  if (env.SVC_BROWSER) {
    if (platform === 'win32') return {command: 'cmd', args: ['/c', `${env.SVC_BROWSER} "${url}"`]}
    return {command: '/bin/sh', args: ['-c', `${env.SVC_BROWSER} "$1"`, 'svc-browser', url]}
  }
  if (platform === 'darwin') return {command: 'open', args: [url]}
  if (platform === 'win32') return {command: 'cmd', args: ['/c', 'start', '""', url.replace(/&/g, '^&')]}
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return {command: 'xdg-open', args: [url]}
  return null
}

/** True when `openUrl` has a way to open a browser here. */
export const canOpenBrowser = (env: NodeJS.ProcessEnv = process.env) => browserCommand('http://127.0.0.1/', env) !== null

/**
 * Starts the browser on `url` without waiting for it. Resolves false when no browser command
 * exists or it could not be started; the caller prints the URL either way.
 */
export function openUrl(url: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const cmd = browserCommand(url, env)
  if (!cmd) return Promise.resolve(false)
  return new Promise((resolve) => {
    const child = spawn(cmd.command, cmd.args, {stdio: 'ignore', detached: true, env})
    child.once('error', () => resolve(false))
    child.once('spawn', () => {
      child.unref()
      resolve(true)
    })
  })
}
