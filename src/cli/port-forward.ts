/**
 * `svc agent forward`: a local TCP port whose every connection is a WebSocket to the Hub
 * (`GET /api/v1/agents/:id/ports/:port/connect`, binary frames both ways), which the Hub joins
 * to the agent's port through its broker's tunnel. Backpressure is kept both ways (a slow
 * reader pauses the other side), and nothing is buffered beyond a WebSocket's frames.
 */
import net from 'node:net'
import type {Duplex} from 'node:stream'

/** Frames stay well under the Hub's limit for client WebSocket messages (64 KiB). */
const FRAME = 32 * 1024

export interface ForwardOptions {
  endpoint: string
  token: string | null
  agentId: string
  port: number
  /** Local port (0: any free one), on 127.0.0.1. */
  local: number
  /** Called once listening, with the local port. */
  onReady(local: number): void
  /** A connection the Hub refused (the agent stopped, the port closed...). */
  onRefused(message: string): void
  /** Resolves to stop. */
  until: Promise<unknown>
}

/** Writes `chunk` in frames of at most FRAME bytes; false when `to` asks to wait. */
function writeFramed(to: Duplex, chunk: Buffer): boolean {
  let ok = true
  for (let at = 0; at < chunk.length; at += FRAME) ok = to.write(chunk.subarray(at, at + FRAME)) && ok
  return ok
}

export async function forwardPort(o: ForwardOptions): Promise<{connections: number}> {
  const {default: WebSocket, createWebSocketStream} = await import('ws')
  const url = new URL(`/api/v1/agents/${encodeURIComponent(o.agentId)}/ports/${o.port}/connect`, o.endpoint)
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  let connections = 0
  const server = net.createServer((socket) => {
    connections++
    socket.pause()
    const ws = new WebSocket(url, {headers: o.token ? {authorization: `Bearer ${o.token}`} : {}})
    const stream = createWebSocketStream(ws)
    ws.on('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d))
      res.on('end', () => {
        let message = `the Hub answered ${res.statusCode}`
        try {
          message = JSON.parse(body).error.message
        } catch {
          // not the Hub's envelope
        }
        o.onRefused(message)
        socket.destroy()
      })
    })
    ws.on('open', () => socket.resume())
    stream.on('error', () => socket.destroy())
    socket.on('error', () => stream.destroy())
    stream.on('close', () => socket.destroy())
    socket.on('close', () => stream.destroy())
    socket.on('data', (chunk: Buffer) => {
      if (!writeFramed(stream, chunk)) {
        socket.pause()
        stream.once('drain', () => socket.resume())
      }
    })
    socket.on('end', () => stream.end())
    stream.pipe(socket)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.local, '127.0.0.1', () => resolve())
  })
  o.onReady((server.address() as net.AddressInfo).port)
  await o.until
  await new Promise<void>((resolve) => {
    server.close(() => resolve())
    // Open connections end with the command.
    server.unref()
    setTimeout(resolve, 1000).unref()
  })
  return {connections}
}
