import type {} from '@fastify/websocket'
import type {FastifyInstance} from 'fastify'
import {TUNNEL_PATH, type AgentStatusEvent, type AliveEvent, type HelloEvent} from '../../api/tunnel-protocol.js'
import type {AgentsService} from '../../domain/agents/agents-service.js'
import type {BrokersService} from '../../domain/brokers/brokers-service.js'
import {ctxOf} from '../plugins/auth.js'
import type {TunnelRegistry} from '../tunnel/tunnel-registry.js'

const idParam = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}} as const

/**
 * Runtime brokers: two-phase registration, listing, and the tunnel a broker opens to the Hub
 * (HMAC-signed upgrade). Tunnel events are handed to the agents service.
 */
export function brokerRoutes(app: FastifyInstance, deps: {brokers: BrokersService; agents: AgentsService; tunnels: TunnelRegistry}) {
  const {brokers, agents, tunnels} = deps

  tunnels.onEvent = (brokerId, event, data) => {
    const work = (async () => {
      switch (event) {
        case 'hello': {
          const h = data as HelloEvent
          await brokers.connected(brokerId, {capabilities: h.capabilities ?? [], runtimes: h.runtimes ?? [], version: h.version ?? ''})
          await agents.reconcile(brokerId, h.agents ?? [])
          return
        }
        case 'agent_status':
          return agents.brokerReportedStatus(brokerId, data as AgentStatusEvent)
        case 'alive':
          agents.brokerReportedAlive((data as AliveEvent).agentIds ?? [])
          return brokers.seen(brokerId)
      }
    })()
    work.catch((err) => app.log.warn({err, brokerId, event}, 'tunnel event failed'))
  }
  tunnels.onDisconnect = (brokerId) => {
    app.log.info({brokerId}, 'broker disconnected')
    brokers.disconnected(brokerId).catch((err) => app.log.warn({err, brokerId}, 'marking broker offline failed'))
  }

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
