import type {} from '@fastify/websocket'
import type {FastifyInstance, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {TunnelStream} from '../../domain/brokers/gateway.js'
import type {TunnelRegistry} from '../tunnel/tunnel-registry.js'
import {holdForUpgrade, joinWebSocket, takeHeld} from '../upgrade-hold.js'
import {FORWARD_CONTENT_TYPE, FORWARD_DUPLEX_PATH, FORWARD_REQUEST_PATH, FORWARD_STREAM_PATH, type StreamControl} from './forward-client.js'

type Verify = (headers: Record<string, string | string[] | undefined>, method: string, url: string, body: string) => string

const brokerParam = {type: 'object', required: ['brokerId'], properties: {brokerId: {type: 'string', minLength: 1, maxLength: 200}}} as const
const unsigned = () => new AppError('unauthorized', 'replica signature headers missing')
const opSchema = {type: 'object', required: ['op'], properties: {op: {type: 'string', maxLength: 1024 * 1024}}} as const

/** The broker op a forwarded stream or duplex carries in its (signed) query. */
function opOf(request: FastifyRequest): {method: string; params: unknown} {
  let op: {method?: unknown; params?: unknown}
  try {
    op = JSON.parse(Buffer.from((request.query as {op: string}).op, 'base64url').toString())
  } catch {
    throw new AppError('invalid_request', 'op is not base64url JSON')
  }
  if (typeof op.method !== 'string') throw new AppError('invalid_request', 'op.method must be a string')
  return {method: op.method, params: op.params}
}

/**
 * The holding side of forwarding: requests and streams other replicas send for a broker whose
 * tunnel is on this replica. Served from this replica's own tunnels only (never forwarded on),
 * and only to a call signed for this replica (replica-auth.ts): the routes take no user, agent
 * or broker credential, so nothing outside the replicas can use them.
 */
export function forwardRoutes(deps: {tunnels: TunnelRegistry; verify: Verify}) {
  const {tunnels, verify} = deps
  // Requests whose signature was checked over the exact bytes of their body.
  const verified = new WeakSet<FastifyRequest>()
  const streams = new WeakMap<FastifyRequest, TunnelStream | AppError>()

  return async (root: FastifyInstance) => {
    await root.register(async (app) => {
      app.addContentTypeParser(FORWARD_CONTENT_TYPE, {parseAs: 'string'}, (request, body, done) => {
        try {
          verify(request.headers, 'POST', request.url, body as string)
          verified.add(request)
          done(null, JSON.parse(body as string))
        } catch (err) {
          done(err as Error)
        }
      })

      app.post(
        FORWARD_REQUEST_PATH,
        {
          config: {auth: false},
          // A start carries the agent's environment and secret files: the tunnel's own limit.
          bodyLimit: 32 * 1024 * 1024,
          schema: {
            params: brokerParam,
            body: {
              type: 'object',
              required: ['method'],
              properties: {method: {type: 'string', minLength: 1, maxLength: 100}, params: {}, timeoutMs: {type: 'integer', minimum: 1, maximum: 86_400_000}},
            },
          },
          // Refused before the body is read unless it comes as a signed forward.
          onRequest: async (request) => {
            if (request.headers['content-type'] !== FORWARD_CONTENT_TYPE) throw unsigned()
          },
          preHandler: async (request) => {
            if (!verified.has(request)) throw unsigned()
          },
        },
        async (request) => {
          const {brokerId} = request.params as {brokerId: string}
          const b = request.body as {method: string; params?: unknown; timeoutMs?: number}
          return {result: await tunnels.request(brokerId, b.method, b.params, b.timeoutMs)}
        },
      )

      app.get(
        FORWARD_STREAM_PATH,
        {
          websocket: true,
          config: {auth: false},
          schema: {params: brokerParam, querystring: opSchema},
          onRequest: async (request) => {
            verify(request.headers, 'GET', request.url, '')
          },
          preHandler: async (request) => {
            const {brokerId} = request.params as {brokerId: string}
            const op = opOf(request)
            // Opened before the upgrade completes; a refusal is told on the socket, as the tunnel does.
            const opened = await tunnels.openStream(brokerId, op.method, op.params).catch((err) => (err instanceof AppError ? err : new AppError('broker_error', (err as Error).message)))
            streams.set(request, opened)
          },
        },
        (socket, request) => {
          const stream = streams.get(request)
          const control = (m: StreamControl) => socket.readyState === socket.OPEN && socket.send(JSON.stringify(m))
          if (!stream || stream instanceof AppError) {
            control({t: 'close', error: stream ? {code: stream.code, message: stream.message} : {code: 'broker_error', message: 'no stream'}})
            return socket.close(1000)
          }
          control({t: 'opened'})
          stream.onData((chunk) => socket.readyState === socket.OPEN && socket.send(chunk, {binary: true}))
          stream.onClose((error) => {
            control({t: 'close', ...(error && {error})})
            if (socket.readyState === socket.OPEN) socket.close(1000)
          })
          socket.on('message', (data, isBinary) => {
            if (isBinary) return stream.write(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer))
            try {
              const m = JSON.parse(data.toString()) as StreamControl
              if (m.t === 'resize' && Number.isInteger(m.cols) && Number.isInteger(m.rows)) stream.resize(m.cols, m.rows)
            } catch {
              // not a control message
            }
          })
          socket.on('close', () => stream.close())
        },
      )

      // A byte stream with flow control (an agent's port): opened before the upgrade, so a
      // refusal (404 for a port the agent does not listen on) is the answer to the upgrade.
      app.route({
        method: 'GET',
        url: FORWARD_DUPLEX_PATH,
        config: {auth: false},
        schema: {params: brokerParam, querystring: opSchema},
        onRequest: async (request) => {
          verify(request.headers, 'GET', request.url, '')
        },
        preHandler: async (request) => {
          const op = opOf(request)
          // Closed with the caller's socket unless the upgrade hands it to wsHandler.
          holdForUpgrade(request, await tunnels.openDuplex((request.params as {brokerId: string}).brokerId, op.method, op.params))
        },
        handler: async (request, reply) => {
          takeHeld(request)?.destroy()
          return reply.code(426).header('upgrade', 'websocket').send({error: {code: 'invalid_request', message: 'a forwarded byte stream needs a WebSocket upgrade', requestId: request.id}})
        },
        wsHandler: (socket, request) => {
          const stream = takeHeld(request)
          if (!stream) return socket.close(1011, 'no stream')
          joinWebSocket(socket, stream)
        },
      })
    })
  }
}
