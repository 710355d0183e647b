import type {FastifyInstance} from 'fastify'
import type {SecretsService} from '../../domain/secrets/secrets-service.js'
import {ctxOf} from '../plugins/auth.js'

const params = {type: 'object', required: ['id', 'key'], properties: {id: {type: 'string', minLength: 1}, key: {type: 'string', minLength: 1, maxLength: 128}}} as const

/** Project and user secrets: values go in, never come out (list shows metadata only). */
export function secretRoutes(secrets: SecretsService) {
  return async (app: FastifyInstance) => {
    for (const base of ['/api/v1/projects', '/api/v1/groves']) {
      app.get(`${base}/:id/secrets`, {schema: {params: {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}}}}, async (request) => ({
        secrets: await secrets.list(ctxOf(request), (request.params as {id: string}).id),
      }))
      app.put(
        `${base}/:id/secrets/:key`,
        {schema: {params, body: {type: 'object', required: ['value'], additionalProperties: false, properties: {value: {type: 'string', maxLength: 65536}, scope: {type: ['string', 'null']}}}}},
        async (request) => {
          const p = request.params as {id: string; key: string}
          return {secret: await secrets.put(ctxOf(request), p.id, p.key, request.body as {value: string; scope?: string})}
        },
      )
      app.delete(`${base}/:id/secrets/:key`, {schema: {params, querystring: {type: 'object', properties: {scope: {type: 'string'}}}}}, async (request) => {
        const p = request.params as {id: string; key: string}
        return secrets.remove(ctxOf(request), p.id, p.key, (request.query as {scope?: string}).scope)
      })
    }
  }
}
