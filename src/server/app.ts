import cookie from '@fastify/cookie'
import websocket from '@fastify/websocket'
import Fastify, {LogController, type FastifyInstance} from 'fastify'
import type {Logger} from 'pino'
import type {Services} from '../domain/services.js'
import {callerResolution, installAuth, installRequestBasics} from './plugins/auth.js'
import {frameworkErrors, installErrorHandling} from './plugins/errors.js'
import {clientErrorHandler} from './plugins/client-errors.js'
import {requestIdOf} from './request-id.js'
import {DEFAULT_HTTP_LIMITS, limitPayloadPerPath, PerPathWebSocket, type HttpLimits} from './http-limits.js'
import {StreamSlots} from '../domain/agents/stream-slots.js'
import {AuthFailureThrottle} from '../domain/auth/failure-throttle.js'
import {installValidation} from './plugins/validation.js'
import {installMaintenanceGate, maintenanceGate} from './plugins/maintenance.js'
import {agentRoutes} from './routes/agents.js'
import {agentStatusRoutes} from './routes/agent-status.js'
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

  // The root's own hooks run for every request, the 404 answer included: callbacks, so none
  // costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    // Health checks and agents' high-frequency status reports log at debug, not info.
    const level = request.routeOptions.config?.quietLog === true ? 'debug' : 'info'
    if ((request.log as Logger).isLevelEnabled(level)) request.log[level]({method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime)}, 'request')
    done()
  })

  installValidation(app)
  installErrorHandling(app)
  installRequestBasics(app)
  await app.register(websocket, {options: {maxPayload: limits.clientWsMaxPayload, WebSocket: PerPathWebSocket as never}})
  limitPayloadPerPath(app.websocketServer, limits)
  const {services} = deps
  const resolution = callerResolution(
    services.authenticate,
    (headers, method, url, body) => services.brokers.verifySigned(headers, method, url, body),
    new AuthFailureThrottle(limits.authFailuresPerWindow, limits.authFailureWindowMs),
    (secret) => services.agentTokens.cached(secret),
  )
  const settings = services.settings
  const maintenance = settings ? {active: () => settings.maintenance.active(), message: () => settings.maintenance.get().message} : undefined

  // Agents' status reports: the one route on the root, outside the generic hooks below (cookie
  // parsing, the async auth and maintenance hooks), running the same steps itself (agent-status.ts).
  agentStatusRoutes(app, services.agents, {resolution, maintenance: maintenance && maintenanceGate(maintenance.active, maintenance.message)})

  // Every other route, in one scope with the generic hooks. Hooks added inside this scope (also by
  // route plugins) apply to its routes only; the root answers what no route matches.
  await app.register(async (api) => {
    await api.register(cookie)
    installAuth(api, resolution)
    if (maintenance) installMaintenanceGate(api, maintenance.active, maintenance.message)

    healthRoutes(api, services.ping)
    authRoutes(api, services)
    oidcRoutes(api, services.signIn)
    userRoutes(api, services.users)
    projectRoutes(api, services.projects, '/api/v1/projects')
    projectRoutes(api, services.projects, '/api/v1/groves')
    brokerRoutes(api, {brokers: services.brokers, tunnels: deps.tunnels})
    agentRoutes(api, services.agents, {
      attach: new StreamSlots('attach', limits.attachPerCaller, limits.attachPerAgent).gate,
      logs: new StreamSlots('logs', limits.logsPerCaller, limits.logsPerAgent).gate,
    })
    agentHookRoutes(api, services.hookReports)
    agentReviewRoutes(api, services.review)
    agentTreeRoutes(api, services.teams, services)
    templateRoutes(api, services.templates)
    await messageRoutes(api, services.messages)
    keysRoutes(api, services.keys)
    projectSettingsRoutes(api, services.projectSettings)
    for (const extra of services.routePlugins) await extra(api)
  })
  return app
}
