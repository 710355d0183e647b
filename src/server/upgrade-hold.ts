/**
 * A byte stream opened for a WebSocket upgrade before the upgrade completes (in a route's
 * preHandler, so that a refusal such as 404 for a port the agent does not listen on is the
 * answer to the upgrade). If the upgrade never reaches the route's wsHandler (the client went
 * away meanwhile, or `ws` refused the handshake and destroyed the socket), nothing else would
 * ever close the stream: the agent's port, or the broker's tunnel stream, would stay open.
 */
import type {Duplex} from 'node:stream'
import type {FastifyRequest} from 'fastify'

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
