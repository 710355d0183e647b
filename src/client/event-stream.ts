import http from 'node:http'
import {AppError} from '../api/app-error.js'
import type {AgentEventDto} from '../api/agent-event.js'
import {errorFromResponse, httpsModule} from './http.js'
import {mayTryNext} from '../api/replica-failover.js'


export interface EventStream {
  /** Resolves when the connection ends (null when closed by `close()`). */
  ended: Promise<AppError | null>
  close(): void
}

/**
 * Opens `GET /api/v1/events` once. Resolves when the Hub answered 200 (events then go to
 * `onEvent` with their `id`); rejects with the Hub's error, or `hub_unreachable`.
 */
export function openEventStream(url: string, token: string | null, onEvent: (seq: string | undefined, e: AgentEventDto) => void, lastEventId?: string): Promise<EventStream> {
  const u = new URL(url)
  const lib = u.protocol === 'https:' ? httpsModule() : http
  const headers: Record<string, string> = {accept: 'text/event-stream', ...(token && {authorization: `Bearer ${token}`}), ...(lastEventId && {'last-event-id': lastEventId})}
  return new Promise((resolve, reject) => {
    let closing = false
    const req = lib.get(u, {headers}, (res) => {
      if (res.statusCode !== 200) {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (text += c))
        res.on('end', () => {
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {
            // not JSON
          }
          reject(errorFromResponse(res.statusCode ?? 0, body, 'GET', u))
        })
        return
      }
      let endResolve!: (e: AppError | null) => void
      const ended = new Promise<AppError | null>((r) => (endResolve = r))
      let buf = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buf += chunk
        let i: number
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i)
          buf = buf.slice(i + 2)
          let id: string | undefined
          let event = 'message'
          const data: string[] = []
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4)
            else if (line.startsWith('event: ')) event = line.slice(7)
            else if (line.startsWith('data: ')) data.push(line.slice(6))
          }
          if (event === 'agent' && data.length) {
            try {
              onEvent(id, JSON.parse(data.join('\n')) as AgentEventDto)
            } catch {
              // a malformed event is skipped
            }
          }
        }
      })
      const done = () => endResolve(closing ? null : new AppError('hub_unreachable', `the event stream of ${u.origin} ended`, {endpoint: u.origin}))
      res.on('end', done)
      res.on('close', done)
      res.on('error', done)
      resolve({
        ended,
        close: () => {
          closing = true
          req.destroy()
        },
      })
    })
    req.on('error', (err) => {
      if (!closing) reject(new AppError('hub_unreachable', `cannot reach the Hub at ${u.origin}: ${(err as NodeJS.ErrnoException).code ?? err.message}`, {endpoint: u.origin}))
    })
  })
}

/**
 * Follows agent events, reconnecting with `Last-Event-ID` when the connection drops (after 1 s),
 * so nothing is missed. The first connection's failure rejects; later ones are retried until
 * `close()`. `onConnected` runs after every (re)connection (callers re-read state there).
 * With several URLs (a deployment's replicas, events in their shared database) the first
 * connection tries each in turn and a failed reconnection moves on to the next.
 */
export async function followAgentEvents(
  url: string | string[],
  token: string | null,
  onEvent: (e: AgentEventDto) => void,
  onConnected: () => Promise<void> | void = () => {},
): Promise<{close(): void}> {
  let last: string | undefined
  let current: EventStream | null = null
  let closed = false
  const handler = (seq: string | undefined, e: AgentEventDto) => {
    if (seq) last = seq
    onEvent(e)
  }
  const urls = typeof url === 'string' ? [url] : url
  let at = 0
  for (;;) {
    try {
      current = await openEventStream(urls[at], token, handler)
      break
    } catch (err) {
      // The same rule as every read of `svc mcp` (a GET): not sent, unanswered, or no replica there.
      if (at === urls.length - 1 || !mayTryNext(err, 'GET')) throw err
      at++
    }
  }
  await onConnected()
  const loop = async () => {
    while (!closed && current) {
      await current.ended
      current = null
      while (!closed && !current) {
        await new Promise((r) => setTimeout(r, 1000))
        if (closed) break
        current = await openEventStream(urls[at], token, handler, last).catch(() => null)
        if (!current) at = (at + 1) % urls.length
      }
      if (current && closed) current.close()
    }
  }
  void loop()
  return {
    close: () => {
      closed = true
      current?.close()
    },
  }
}

/** The agent as an event leaves it (the event carries phase, activity, detail). */
