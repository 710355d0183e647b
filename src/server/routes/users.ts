import type {FastifyInstance} from 'fastify'
import type {UsersService} from '../../domain/users/users-service.js'
import {HUB_ROLE_NAMES} from '../../domain/authz/hub-roles.js'
import {ctxOf} from '../plugins/auth.js'

const idParam = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}} as const

/** `/api/v1/users`: system admins list users, suspend or reactivate them, grant admin or a Hub role. */
export function userRoutes(app: FastifyInstance, users: UsersService) {
  app.get('/api/v1/users', async (request) => ({users: await users.list(ctxOf(request))}))
  app.get('/api/v1/users/:id', {schema: {params: idParam}}, async (request) => ({
    user: await users.get(ctxOf(request), (request.params as {id: string}).id),
  }))
  app.patch(
    '/api/v1/users/:id',
    {
      schema: {
        params: idParam,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: {
            status: {type: 'string', enum: ['active', 'suspended']},
            systemAdmin: {type: 'boolean'},
            // null removes the role; a name this Hub does not define is a 400 validation_error.
            hubRole: {type: ['string', 'null'], enum: [...HUB_ROLE_NAMES, null]},
          },
        },
      },
    },
    async (request) => ({user: await users.update(ctxOf(request), (request.params as {id: string}).id, request.body as never)}),
  )
}
