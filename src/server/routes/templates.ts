import type {FastifyInstance} from 'fastify'
import type {TemplatesService} from '../../domain/templates/templates-service.js'
import {ctxOf} from '../plugins/auth.js'

/** Templates: list, upload (a new template or a new version), get with versions. */
export function templateRoutes(app: FastifyInstance, templates: TemplatesService) {
  app.get('/api/v1/templates', {schema: {querystring: {type: 'object', additionalProperties: false, properties: {projectId: {type: 'string', minLength: 1}}}}}, async (request) => ({
    templates: await templates.list(ctxOf(request), request.query as {projectId?: string}),
  }))

  app.post(
    '/api/v1/templates',
    {
      bodyLimit: 16 * 1024 * 1024,
      schema: {
        body: {
          type: 'object',
          required: ['name', 'files'],
          additionalProperties: false,
          properties: {
            name: {type: 'string', minLength: 1, maxLength: 63},
            projectId: {type: ['string', 'null']},
            description: {type: 'string', maxLength: 10_000},
            files: {
              type: 'array',
              items: {
                type: 'object',
                required: ['path', 'content', 'sha256'],
                additionalProperties: false,
                properties: {path: {type: 'string', minLength: 1}, content: {type: 'string'}, sha256: {type: 'string', pattern: '^[0-9a-fA-F]{64}$'}},
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const result = await templates.upload(ctxOf(request), request.body as never)
      return reply.code(201).send(result)
    },
  )

  app.get('/api/v1/templates/:id', {schema: {params: {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}}}}, async (request) =>
    templates.get(ctxOf(request), (request.params as {id: string}).id),
  )
}
