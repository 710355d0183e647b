import type {FastifyInstance, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * true: an agent's (or its broker's) liveness report, such as a status report, heartbeat or
     * token refresh. These pass the maintenance gate: refusing them would mark every agent
     * offline and let agent tokens expire while the Hub is in maintenance.
     */
    livenessReport?: boolean
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])
/** Reachable during maintenance: health, sign-in and the admin routes. */
const OPEN_PREFIXES = ['/healthz', '/readyz', '/api/v1/auth/', '/auth/', '/api/v1/admin/', '/api/v1/system/']

/**
 * While maintenance is on, the Hub refuses mutating requests of anyone but a system admin with
 * 503 `system_maintenance`. Runs after authentication (preHandler) so it knows the caller.
 * Agents' and brokers' liveness reports pass (routes marked `livenessReport`): they change no
 * user-visible resource, and without them every agent would turn offline during maintenance.
 */
export function installMaintenanceGate(app: FastifyInstance, active: () => boolean, message: () => string) {
  const gate = maintenanceGate(active, message)
  app.addHook('preHandler', async (request) => gate(request))
}

/** The gate's decision for one request: throws 503 `system_maintenance` when it is refused. */
export function maintenanceGate(active: () => boolean, message: () => string) {
  return (request: FastifyRequest): void => {
    if (!active() || SAFE.has(request.method)) return
    const path = request.url.split('?')[0]
    if (OPEN_PREFIXES.some((p) => path === p || path.startsWith(p))) return
    const p = request.callContext?.principal
    if (p?.kind === 'user' && p.systemAdmin) return
    if ((p?.kind === 'agent' || p?.kind === 'broker') && request.routeOptions.config?.livenessReport === true) return
    throw new AppError('system_maintenance', message() || 'the Hub is in maintenance mode; try again later', {maintenance: true})
  }
}
