import type {FastifyInstance} from 'fastify'
import {AppError} from '../../api/app-error.js'

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])
/** Reachable during maintenance: health, sign-in and the admin routes. */
const OPEN_PREFIXES = ['/healthz', '/readyz', '/api/v1/auth/', '/auth/', '/api/v1/admin/', '/api/v1/system/']

/**
 * While maintenance is on, the Hub refuses mutating requests of anyone but a system admin with
 * 503 `system_maintenance`. Runs after authentication (preHandler) so it knows the caller.
 */
export function installMaintenanceGate(app: FastifyInstance, active: () => boolean, message: () => string) {
  app.addHook('preHandler', async (request) => {
    if (!active() || SAFE.has(request.method)) return
    const path = request.url.split('?')[0]
    if (OPEN_PREFIXES.some((p) => path === p || path.startsWith(p))) return
    const p = request.callContext?.principal
    if (p?.kind === 'user' && p.systemAdmin) return
    throw new AppError('system_maintenance', message() || 'the Hub is in maintenance mode; try again later', {maintenance: true})
  })
}
