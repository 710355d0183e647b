import cookie from '@fastify/cookie'
import websocket from '@fastify/websocket'
import Fastify, {LogController, type FastifyInstance} from 'fastify'
import type {Logger} from 'pino'
import type {Services} from '../domain/services.js'
import {installAuth} from './plugins/auth.js'
import {frameworkErrors, installErrorHandling} from './plugins/errors.js'
import {clientErrorHandler} from './plugins/client-errors.js'
import {requestIdOf} from './request-id.js'
import {DEFAULT_HTTP_LIMITS, limitPayloadPerPath, PerPathWebSocket, type HttpLimits} from './http-limits.js'
import {StreamSlots} from '../domain/agents/stream-slots.js'
import {AuthFailureThrottle} from '../domain/auth/failure-throttle.js'
import {installValidation} from './plugins/validation.js'
import {installMaintenanceGate} from './plugins/maintenance.js'
import {agentRoutes} from './routes/agents.js'
import {agentHookRoutes} from './routes/agent-hooks.js'
import {agentReviewRoutes} from './routes/agent-review.js'
import {agentTreeRoutes} from './routes/agent-tree.js'
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
  /** Timeouts, connection and socket caps (DEFAULT_HTTP_LIMITS unless given). */
  limits?: Partial<HttpLimits>
}

/**
 * Builds the Hub's Fastify instance from its dependencies. It never listens: main.ts does, and
 * tests drive it with `inject`.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limits: HttpLimits = {...DEFAULT_HTTP_LIMITS, ...deps.limits}
  // Typed as the default instance so route modules need not carry pino's logger generic.
  const app = Fastify({
    loggerInstance: deps.logger,
    // One access-log line per request comes from the onResponse hook below.
    logController: new LogController({disableRequestLogging: true}),
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Errors before routing (a bad URL, a parameter too long) and those of Node's HTTP parser
    // (timeouts, headers too large, unknown methods) answer with the envelope too.
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(deps.logger),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Slow or stalled clients: headers and whole requests have deadlines (408 in the envelope),
    // and a connection idle both ways is closed. Node checks the deadlines every timeoutCheckMs.
    http: {headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: limits.timeoutCheckMs},
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
  }) as unknown as FastifyInstance
  app.server.maxConnections = limits.maxConnections

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
  await app.register(websocket, {options: {maxPayload: limits.clientWsMaxPayload, WebSocket: PerPathWebSocket as never}})
  limitPayloadPerPath(app.websocketServer, limits)
  const {services} = deps
  installAuth(
    app,
    services.authenticate,
    (headers, method, url, body) => services.brokers.verifySigned(headers, method, url, body),
    new AuthFailureThrottle(limits.authFailuresPerWindow, limits.authFailureWindowMs),
  )
  const settings = services.settings
  if (settings) installMaintenanceGate(app, () => settings.maintenance.active(), () => settings.maintenance.get().message)

  healthRoutes(app, services.ping)
  authRoutes(app, services)
  oidcRoutes(app, services.signIn)
  userRoutes(app, services.users)
  projectRoutes(app, services.projects, '/api/v1/projects')
  projectRoutes(app, services.projects, '/api/v1/groves')
  brokerRoutes(app, {brokers: services.brokers, tunnels: deps.tunnels})
  agentRoutes(app, services.agents, {
    attach: new StreamSlots('attach', limits.attachPerCaller, limits.attachPerAgent).gate,
    logs: new StreamSlots('logs', limits.logsPerCaller, limits.logsPerAgent).gate,
  })
  agentHookRoutes(app, services.hookReports)
  agentReviewRoutes(app, services.review)
  agentTreeRoutes(app, services.teams, services)
  templateRoutes(app, services.templates)
  await messageRoutes(app, services.messages)
  keysRoutes(app, services.keys)
  projectSettingsRoutes(app, services.projectSettings)
  for (const extra of services.routePlugins) await extra(app)
  return app
}
