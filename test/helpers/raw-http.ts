import net from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** The connection closed without any response bytes. */
  empty: boolean
}

/** Parses one HTTP/1.1 response from raw bytes (Content-Length bodies only). */
export function parseResponse(text: string): RawResponse {
  if (!text) return {status: 0, headers: {}, body: '', empty: true}
  const [head, ...rest] = text.split('\r\n\r\n')
  const [statusLine, ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const l of lines) {
    const i = l.indexOf(':')
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
  }
  return {status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), empty: false}
}

/**
 * Writes raw bytes to host:port and collects everything until the server closes the connection
 * (or `waitMs` passes, then the socket is destroyed). `keepOpen` leaves the writing side open.
 */
export function rawRequest(port: number, text: string | Buffer, opts: {waitMs?: number} = {}): Promise<RawResponse & {closedByServer: boolean}> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let done = false
    const s = net.connect(port, '127.0.0.1', () => s.write(text))
    const finish = (closedByServer: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      s.destroy()
      resolve({...parseResponse(Buffer.concat(chunks).toString('utf8')), closedByServer})
    }
    s.on('data', (d) => chunks.push(d))
    s.on('end', () => finish(true))
    s.on('close', () => finish(true))
    s.on('error', () => finish(true))
    const timer = setTimeout(() => finish(false), opts.waitMs ?? 10_000)
  })
}
