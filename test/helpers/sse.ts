import http from 'node:http'
import {waitFor} from './live-hub.js'

export interface SseEvent {
  id?: string
  event: string
  data: any
}

export interface SseClient {
  status: number
  headers: http.IncomingHttpHeaders
  events: SseEvent[]
  comments: string[]
  /** The body when the answer was not a stream (an error envelope). */
  body: string
  /** True once the server ended the stream. */
  ended: boolean
  /** Waits for an event matching `pred` (10 s). */
  next(pred: (e: SseEvent) => boolean, what?: string): Promise<SseEvent>
  close(): void
}

/**
 * A Server-Sent Events client over node:http (no EventSource in Node 20): parses `id:`,
 * `event:`, `data:` and comment lines as they arrive.
 */
export function openSse(url: string, opts: {token?: string; headers?: Record<string, string>} = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, {headers: {accept: 'text/event-stream', ...(opts.token && {authorization: `Bearer ${opts.token}`}), ...opts.headers}}, (res) => {
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        comments: [],
        body: '',
        ended: false,
        next: async (pred, what = 'event') => waitFor(() => client.events.find(pred), 10_000, what),
        close: () => req.destroy(),
      }
      let buf = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        if (!String(res.headers['content-type']).startsWith('text/event-stream')) {
          client.body += chunk
          return
        }
        buf += chunk
        let i: number
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i)
          buf = buf.slice(i + 2)
          const ev: {id?: string; event: string; data: string[]} = {event: 'message', data: []}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim())
            else if (line.startsWith('id: ')) ev.id = line.slice(4)
            else if (line.startsWith('event: ')) ev.event = line.slice(7)
            else if (line.startsWith('data: ')) ev.data.push(line.slice(6))
          }
          if (ev.data.length) client.events.push({id: ev.id, event: ev.event, data: JSON.parse(ev.data.join('\n'))})
        }
      })
      res.on('error', () => {})
      res.on('end', () => (client.ended = true))
      res.on('close', () => (client.ended = true))
      // Resolve once the head is in; an error answer's body arrives just after.
      if (res.statusCode !== 200) res.on('end', () => resolve(client))
      else resolve(client)
    })
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err)
    })
  })
}
