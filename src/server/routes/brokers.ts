import type {} from '@fastify/websocket'
import type {FastifyInstance} from 'fastify'
import {TUNNEL_PATH} from '../../api/tunnel-protocol.js'
import type {BrokersService} from '../../domain/brokers/brokers-service.js'
import {ctxOf} from '../plugins/auth.js'
import type {TunnelRegistry} from '../tunnel/tunnel-registry.js'

const idParam = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}} as const

/**
 * Runtime brokers: two-phase registration, listing, and the tunnel a broker opens to the Hub
 * (HMAC-signed upgrade). What the tunnel's events do is wired in the composition root.
 */
export function brokerRoutes(app: FastifyInstance, deps: {brokers: BrokersService; tunnels: TunnelRegistry}) {
  const {brokers, tunnels} = deps

  app.post(
    '/api/v1/brokers/register',
    {schema: {body: {type: 'object', required: ['name'], additionalProperties: false, properties: {name: {type: 'string', minLength: 1, maxLength: 200}}}}},
    async (request, reply) => reply.code(201).send(await brokers.register(ctxOf(request), request.body as {name: string})),
  )

  app.post(
    '/api/v1/brokers/join',
    {
      config: {auth: false},
      schema: {body: {type: 'object', required: ['joinToken'], additionalProperties: false, properties: {joinToken: {type: 'string', minLength: 1, maxLength: 200}}}},
    },
    async (request) => brokers.join(request.body as {joinToken: string}),
  )

  app.get('/api/v1/brokers', async (request) => ({brokers: await brokers.list(ctxOf(request))}))
  app.get('/api/v1/brokers/:id', {schema: {params: idParam}}, async (request) => ({broker: await brokers.get(ctxOf(request), (request.params as {id: string}).id)}))

  app.get(
    TUNNEL_PATH,
    {
      websocket: true,
      config: {auth: false},
      // The upgrade is refused (401, in the envelope) unless signed by a joined broker.
      preHandler: async (request) => {
        const brokerId = await brokers.verifySigned(request.headers, 'GET', request.url, '')
        request.callContext = {principal: {kind: 'broker', id: brokerId}, credentialKind: 'broker', requestId: request.id}
      },
    },
    (socket, request) => {
      const brokerId = request.callContext!.principal.id
      tunnels.add(brokerId, socket)
      app.log.info({brokerId}, 'broker connected')
    },
  )
}
