import type {FastifyRequest} from 'fastify'
import type {WebSocket} from 'ws'
import {AppError} from '../../api/app-error.js'
import type {TunnelStream} from '../../domain/brokers/gateway.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** A broker stream opened before the WebSocket upgrade (attach, follow logs). */
    agentStream?: TunnelStream
    /** Why no stream was opened although the upgrade goes ahead (a socket cap): told on the socket. */
    streamRefusal?: AppError
  }
}

/**
 * Joins a client WebSocket to a broker stream. Binary frames carry terminal bytes both ways;
 * text frames carry JSON control messages (`{"type":"resize","cols","rows"}` from the client,
 * `{"type":"error","code","message"}` from the Hub before it closes).
 */
export function pipeStream(socket: WebSocket, request: FastifyRequest, opts: {readOnly: boolean}) {
  const stream = request.agentStream
  const refusal = request.streamRefusal
  if (refusal) {
    // A browser cannot read an HTTP refusal of an upgrade, so a cap is said on the socket: the
    // error frame of this protocol, then close code 1008 (policy) with the code as the reason.
    socket.send(JSON.stringify({type: 'error', code: refusal.code, message: refusal.message}))
    socket.close(1008, `${refusal.code}: ${refusal.message}`.slice(0, 120))
    return
  }
  if (!stream) {
    socket.close(1011, 'no stream')
    return
  }
  stream.onData((chunk) => {
    if (socket.readyState === socket.OPEN) socket.send(chunk, {binary: true})
  })
  stream.onClose((error) => {
    if (socket.readyState !== socket.OPEN) return
    if (error) socket.send(JSON.stringify({type: 'error', code: error.code, message: error.message}))
    socket.close(1000, 'stream ended')
  })
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      if (!opts.readOnly) stream.write(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer))
      return
    }
    try {
      const msg = JSON.parse(data.toString())
      if (msg?.type === 'resize' && Number.isInteger(msg.cols) && Number.isInteger(msg.rows) && msg.cols > 0 && msg.rows > 0 && msg.cols <= 1000 && msg.rows <= 1000) {
        stream.resize(msg.cols, msg.rows)
      } else if (msg?.type === 'input' && typeof msg.data === 'string' && !opts.readOnly) {
        stream.write(Buffer.from(msg.data, 'utf8'))
      }
    } catch {
      // Not JSON: ignore rather than tear down an interactive session.
    }
  })
  socket.on('close', () => stream.close())
}

/**
 * Opens the stream of an upgrade; a socket cap (429 quota_exceeded) is kept for the socket to
 * tell instead of refusing the upgrade. Every other error refuses the upgrade as before.
 */
export async function refusedOnSocket(request: FastifyRequest, open: () => Promise<TunnelStream>) {
  try {
    request.agentStream = await open()
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'quota_exceeded') throw err
    request.streamRefusal = err
  }
}

export const isUpgrade = (request: FastifyRequest) => (request.headers.upgrade ?? '').toLowerCase() === 'websocket'

export const notRunning = (what: string) => new AppError('conflict', what)
