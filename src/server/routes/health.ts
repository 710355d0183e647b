import type {FastifyInstance} from 'fastify'
import {AppError} from '../../api/app-error.js'
import {sendError} from '../plugins/errors.js'

/** Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers). */
export function healthRoutes(app: FastifyInstance, ping: () => Promise<void>) {
  app.get('/healthz', {config: {auth: false, quietLog: true}}, async () => ({status: 'ok'}))
  app.get('/readyz', {config: {auth: false, quietLog: true}}, async (request, reply) => {
    try {
      await ping()
      return {status: 'ready'}
    } catch (err) {
      request.log.warn({err}, 'readiness check failed')
      return sendError(reply, request, new AppError('not_ready', 'the database does not answer'))
    }
  })
}
