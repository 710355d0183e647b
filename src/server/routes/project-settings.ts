import type {FastifyInstance} from 'fastify'
import type {ProjectSettingsService} from '../../domain/project-settings/project-settings-service.js'
import {ctxOf} from '../plugins/auth.js'

const params = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}} as const

/** `/api/v1/projects/:id/settings` (and `/resolved`), also under `/api/v1/groves`. */
export function projectSettingsRoutes(app: FastifyInstance, settings: ProjectSettingsService) {
  for (const prefix of ['/api/v1/projects', '/api/v1/groves']) {
    app.get(`${prefix}/:id/settings`, {schema: {params}}, async (request) => ({settings: await settings.get(ctxOf(request), (request.params as {id: string}).id)}))
    app.put(`${prefix}/:id/settings`, {schema: {params, body: {type: 'object'}}}, async (request) => ({
      settings: await settings.update(ctxOf(request), (request.params as {id: string}).id, request.body as Record<string, unknown>),
    }))
    app.get(`${prefix}/:id/settings/resolved`, {schema: {params}}, async (request) => settings.resolved(ctxOf(request), (request.params as {id: string}).id))
  }
}
