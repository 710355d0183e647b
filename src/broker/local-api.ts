import websocket from '@fastify/websocket'
import Fastify, {LogController, type FastifyInstance, type FastifyRequest} from 'fastify'
import type {Logger} from 'pino'
import {AppError} from '../api/app-error.js'
import {NonceCache, SIGNATURE_HEADERS, verifySignature} from '../api/broker-signing.js'
import {carriesRaw, INGRESS, logRawRefusal, rawRefusal} from '../api/raw-input.js'
import {parseMessageBody} from '../domain/messages/message-body.js'
import {installErrorHandling} from '../server/plugins/errors.js'
import type {Broker} from './broker.js'

/**
 * The broker's local API (port 9800 by default): `GET /healthz`, `POST /api/v1/agents` and the
 * attach WebSocket `GET /api/v1/agents/:id/attach`. The Hub never needs it (it commands the
 * broker through the tunnel); it is for callers on the broker's host or network that hold the
 * broker's secret, and every route but /healthz requires a request signed with it.
 */
export async function buildLocalApi(broker: Broker, logger: Logger): Promise<FastifyInstance> {
  const app = Fastify({loggerInstance: logger, logController: new LogController({disableRequestLogging: true})}) as unknown as FastifyInstance
  installErrorHandling(app)
  await app.register(websocket)
  const nonces = new NonceCache()
  // The body as received, kept per request: the signature covers its hash. (One variable shared
  // by every request let a concurrent request's body be checked against another's signature.)
  app.decorateRequest('rawBody', undefined)
  // Lenient: a body that is not JSON arrives as undefined, so a raw field in it is still refused.
  app.addContentTypeParser('application/json', {parseAs: 'string'}, (req, body, done) => {
    req.rawBody = body as string
    try {
      done(null, body === '' ? undefined : JSON.parse(body as string))
    } catch {
      done(null, undefined)
    }
  })
  const verify = async (request: FastifyRequest) => {
    if (request.headers[SIGNATURE_HEADERS.brokerId] !== broker.opts.brokerId) throw new AppError('unauthorized', 'sign requests with this broker\'s ID and secret')
    const failure = verifySignature(broker.opts.secret, request.headers, request.method, request.url, request.method === 'GET' ? '' : (request.rawBody ?? ''))
    if (failure || !nonces.accept(String(request.headers[SIGNATURE_HEADERS.nonce]))) throw new AppError('unauthorized', `signature refused${failure ? `: ${failure}` : ': replayed'}`)
  }

  app.get('/healthz', async () => ({status: 'ok', brokerId: broker.opts.brokerId, hubConnected: broker.connected, agents: broker.registry.all().length}))

  app.post('/api/v1/agents', {preHandler: verify}, async (request, reply) => {
    if (request.body === undefined) throw new AppError('invalid_request', 'the request body is not valid JSON')
    return reply.code(201).send(await broker.request('agent.start', request.body as Record<string, unknown>))
  })

  // Hub-to-broker message delivery for callers holding the broker's secret; raw input refused first.
  app.post('/api/v1/agents/:id/message', {preHandler: verify}, async (request, reply) => {
    if (carriesRaw(request.body, request.rawBody ?? '')) {
      const err = rawRefusal(INGRESS.runtimeBrokerMessage)
      logRawRefusal(logger, err)
      throw err
    }
    if (request.body === undefined) throw new AppError('invalid_request', 'the request body is not valid JSON')
    const body = parseMessageBody(request.body)
    const {id} = request.params as {id: string}
    await broker.request('agent.message', {agentId: id, text: body.text, plain: body.plain, interruptKey: body.interrupt ? 'C-c' : undefined})
    return reply.code(202).send({delivered: true})
  })

  app.get('/api/v1/agents/:id/attach', {websocket: true, preHandler: verify}, (socket, request) => {
    const {id} = request.params as {id: string}
    const q = request.query as {cols?: string; rows?: string}
    // The terminal opens after the upgrade: keep what is typed meanwhile, and close the terminal
    // if the client left before it opened (else its tmux client would be left behind).
    let input: ((d: Buffer) => void) | null = null
    const early: Buffer[] = []
    let closeStream: (() => void) | null = null
    let gone = false
    broker
      .openStream('agent.attach', {agentId: id, cols: Number(q.cols) || 80, rows: Number(q.rows) || 24}, {
        send: (d) => socket.readyState === socket.OPEN && socket.send(d, {binary: true}),
        close: () => socket.close(1000, 'ended'),
        onData: (l) => (input = l),
        onResize: () => {},
        onClose: (l) => (closeStream = l),
      })
      .then(() => {
        if (gone) return closeStream?.()
        for (const d of early.splice(0)) input?.(d)
      })
      .catch((err: Error) => socket.close(1011, err.message.slice(0, 120)))
    socket.on('message', (d, isBinary) => {
      if (!isBinary) return
      if (input) input(d as Buffer)
      else early.push(d as Buffer)
    })
    socket.on('close', () => {
      gone = true
      closeStream?.()
    })
  })
  return app
}
