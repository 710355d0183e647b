import {randomBytes} from 'node:crypto'
import cookie from '@fastify/cookie'
import websocket from '@fastify/websocket'
import Fastify, {LogController, type FastifyInstance} from 'fastify'
import type {Logger} from 'pino'
import type {Services} from '../domain/services.js'
import {installAuth} from './plugins/auth.js'
import {installErrorHandling} from './plugins/errors.js'
import {installValidation} from './plugins/validation.js'
import {installMaintenanceGate} from './plugins/maintenance.js'
import {agentRoutes} from './routes/agents.js'
import {authRoutes} from './routes/auth.js'
import {brokerRoutes} from './routes/brokers.js'
import {templateRoutes} from './routes/templates.js'
import {keysRoutes} from './routes/keys.js'
import {projectSettingsRoutes} from './routes/project-settings.js'
import {messageRoutes} from './routes/messages.js'
import type {TunnelRegistry} from './tunnel/tunnel-registry.js'
import {healthRoutes} from './routes/health.js'
import {oidcRoutes} from './routes/oidc.js'
import {projectRoutes} from './routes/projects.js'
import {userRoutes} from './routes/users.js'

export interface AppDeps {
  services: Services
  logger: Logger
  /** Connected brokers' tunnels. */
  tunnels: TunnelRegistry
  /** Largest accepted JSON body in bytes. */
  bodyLimit?: number
}

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/
const requestPrefix = randomBytes(4).toString('hex')
let requestCounter = 0

/**
 * Builds the Hub's Fastify instance from its dependencies. It never listens: main.ts does, and
 * tests drive it with `inject`.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // Typed as the default instance so route modules need not carry pino's logger generic.
  const app = Fastify({
    loggerInstance: deps.logger,
    // One access-log line per request comes from the onResponse hook below.
    logController: new LogController({disableRequestLogging: true}),
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
    requestIdHeader: false,
    // A well-formed incoming X-Request-Id is kept so a client can correlate; otherwise a new one.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id']
      if (typeof incoming === 'string' && INCOMING_ID.test(incoming)) return incoming
      // A random per-process prefix and a counter: unique without a random draw per request.
      requestCounter = (requestCounter + 1) >>> 0
      return `req_${requestPrefix}${requestCounter.toString(16).padStart(8, '0')}`
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }) as unknown as FastifyInstance

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  app.addHook('onResponse', async (request, reply) => {
    // Health checks and agents' high-frequency status reports log at debug, not info.
    const quiet = request.routeOptions.config?.quietLog === true
    request.log[quiet ? 'debug' : 'info']({method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime)}, 'request')
  })

  installValidation(app)
  installErrorHandling(app)
  await app.register(cookie)
  await app.register(websocket, {options: {maxPayload: 16 * 1024 * 1024}})
  const {services} = deps
  installAuth(app, services.authenticate, (headers, method, url, body) => services.brokers.verifySigned(headers, method, url, body))
  const settings = services.settings
  if (settings) installMaintenanceGate(app, () => settings.maintenance.active(), () => settings.maintenance.get().message)

  healthRoutes(app, services.ping)
  authRoutes(app, services)
  oidcRoutes(app, services.signIn)
  userRoutes(app, services.users)
  projectRoutes(app, services.projects, '/api/v1/projects')
  projectRoutes(app, services.projects, '/api/v1/groves')
  brokerRoutes(app, {brokers: services.brokers, tunnels: deps.tunnels})
  agentRoutes(app, services.agents)
  templateRoutes(app, services.templates)
  await messageRoutes(app, services.messages)
  keysRoutes(app, services.keys)
  projectSettingsRoutes(app, services.projectSettings)
  for (const extra of services.routePlugins) await extra(app)
  return app
}
