import {hubUnreachable} from '../client/http.js'
import {credentialFor} from './credentials.js'

/**
 * This terminal's size, with 80x24 for a dimension it reports as 0 or not at all (a
 * pseudo-terminal nobody sized, e.g. under `script` or a CI runner): the Hub needs 1 to 1000.
 */
export function terminalSize(out: {columns?: number; rows?: number} = process.stdout): {cols: number; rows: number} {
  const fit = (n: number | undefined, fallback: number) => (n && n > 0 ? Math.min(n, 1000) : fallback)
  return {cols: fit(out.columns, 80), rows: fit(out.rows, 24)}
}

/**
 * Connects a WebSocket stream of the Hub (attach, follow logs) to this process's terminal.
 * On a TTY, stdin goes raw, the window size follows SIGWINCH, and Ctrl-] detaches. Without a
 * TTY, stdin is piped as it is and the session ends a moment after stdin does. Terminal bytes
 * go to stdout, or to `output` when given.
 */
export async function runTerminal(url: string, opts: {interactive: boolean; onError: (code: string, message: string) => void; output?: (data: Buffer) => void}): Promise<number> {
  const {default: WebSocket} = await import('ws')
  const endpoint = new URL(url).origin
  const cred = credentialFor(endpoint)
  const u = new URL(url)
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
  const ws = new WebSocket(u, {headers: cred ? {authorization: `Bearer ${cred.token}`} : {}})
  const stdin = process.stdin
  const tty = opts.interactive && !!stdin.isTTY
  return new Promise<number>((resolve) => {
    let code = 0
    const cleanup = () => {
      if (tty) stdin.setRawMode(false)
      stdin.pause()
      process.removeListener('SIGWINCH', onResize)
    }
    const onResize = () => ws.readyState === ws.OPEN && ws.send(JSON.stringify({type: 'resize', ...terminalSize()}))
    ws.on('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d))
      res.on('end', () => {
        try {
          const e = JSON.parse(body).error
          opts.onError(e.code, e.message)
        } catch {
          opts.onError('internal_error', `the Hub answered ${res.statusCode}`)
        }
        code = 1
        cleanup()
        resolve(code)
      })
    })
    ws.on('error', (err) => {
      opts.onError('hub_unreachable', hubUnreachable(endpoint, err.message).message)
      code = 3
    })
    ws.on('open', () => {
      if (!opts.interactive) return
      if (tty) {
        stdin.setRawMode(true)
        process.stderr.write('[attached: press Ctrl-] to detach]\r\n')
        onResize()
        process.on('SIGWINCH', onResize)
      }
      stdin.on('data', (d: Buffer) => {
        if (tty && d.includes(0x1d)) return ws.close(1000, 'detached')
        ws.send(d, {binary: true})
      })
      stdin.on('end', () => setTimeout(() => ws.close(1000, 'input ended'), 500))
      stdin.resume()
    })
    ws.on('message', (data, isBinary) => {
      if (isBinary) return void (opts.output ? opts.output(data as Buffer) : process.stdout.write(data as Buffer))
      try {
        const msg = JSON.parse(data.toString())
        if (msg.type === 'error') {
          opts.onError(msg.code, msg.message)
          code = 1
        }
      } catch {
        // ignore
      }
    })
    ws.on('close', () => {
      cleanup()
      if (tty) process.stderr.write('\r\n[detached]\r\n')
      resolve(code)
    })
  })
}
