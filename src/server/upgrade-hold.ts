/**
 * A byte stream opened for a WebSocket upgrade before the upgrade completes (in a route's
 * preHandler, so that a refusal such as 404 for a port the agent does not listen on is the
 * answer to the upgrade). If the upgrade never reaches the route's wsHandler (the client went
 * away meanwhile, or `ws` refused the handshake and destroyed the socket), nothing else would
 * ever close the stream: the agent's port, or the broker's tunnel stream, would stay open.
 */
import type {Duplex} from 'node:stream'
import type {FastifyRequest} from 'fastify'
import {createWebSocketStream, type WebSocket} from 'ws'

const held = new WeakMap<FastifyRequest, {stream: Duplex; release: () => void}>()

/** Holds `stream` for `request`'s upgrade: destroyed with the request's socket unless taken first. */
export function holdForUpgrade(request: FastifyRequest, stream: Duplex): void {
  const socket = request.raw.socket
  const drop = () => void stream.destroy()
  if (socket.destroyed) return drop()
  socket.once('close', drop)
  held.set(request, {stream, release: () => socket.removeListener('close', drop)})
}

/** The stream held for `request` (the wsHandler's, which closes it from now on); undefined when none is. */
export function takeHeld(request: FastifyRequest): Duplex | undefined {
  const h = held.get(request)
  if (!h) return undefined
  held.delete(request)
  h.release()
  return h.stream
}

// How long the agent's side may take to take in what the WebSocket sent before it closed.
const DRAIN_MS = 5_000

/**
 * Relays the upgraded WebSocket and the byte stream both ways until either ends (a route's
 * wsHandler, with the stream `takeHeld` gave it). A clean end of the stream is passed on (the
 * WebSocket closes after its last bytes); a failure on either side cuts the other. When the
 * WebSocket closes, the stream goes too once what was sent is written (within DRAIN_MS): an
 * agent's server that keeps its half of the connection open would otherwise keep it forever.
 */
export function joinWebSocket(socket: WebSocket, stream: Duplex): void {
  const ws = createWebSocketStream(socket)
  ws.on('error', () => stream.destroy())
  stream.on('error', () => ws.destroy())
  stream.on('close', () => stream.readableEnded || ws.destroy())
  socket.on('close', () => {
    if (stream.destroyed) return
    const done = () => stream.destroy()
    stream.once('finish', done)
    setTimeout(done, DRAIN_MS).unref()
    if (stream.writableFinished) done()
  })
  ws.pipe(stream).pipe(ws)
}
