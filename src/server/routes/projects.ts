import type {FastifyInstance} from 'fastify'
import type {ProjectsService} from '../../domain/projects/projects-service.js'
import {ctxOf} from '../plugins/auth.js'

const idParam = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}} as const
const memberParams = {
  type: 'object',
  required: ['id', 'userId'],
  properties: {id: {type: 'string', minLength: 1}, userId: {type: 'string', minLength: 1}},
} as const
const role = {type: 'string', enum: ['owner', 'admin', 'member']} as const

/**
 * Projects (groves). Registered under `/api/v1/projects` and again under `/api/v1/groves`,
 * which answers the same. `:id` is a project ID or slug.
 */
export function projectRoutes(app: FastifyInstance, projects: ProjectsService, prefix: string) {
  app.get(prefix, async (request) => ({projects: await projects.list(ctxOf(request))}))

  app.post(
    `${prefix}/register`,
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: {type: 'string', minLength: 1, maxLength: 200},
            gitRemote: {type: ['string', 'null'], maxLength: 2000},
            description: {type: 'string', maxLength: 10000},
            // Absolute path of a git checkout on the co-located broker's machine.
            localPath: {type: ['string', 'null'], minLength: 1, maxLength: 4096},
          },
        },
      },
    },
    async (request, reply) => {
      const result = await projects.register(ctxOf(request), request.body as never)
      return reply.code(result.created ? 201 : 200).send(result)
    },
  )

  app.get(`${prefix}/:id`, {schema: {params: idParam}}, async (request) => ({
    project: await projects.get(ctxOf(request), (request.params as {id: string}).id),
  }))

  app.patch(
    `${prefix}/:id`,
    {
      schema: {
        params: idParam,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: {
            name: {type: 'string', minLength: 1, maxLength: 200},
            description: {type: 'string', maxLength: 10000},
            gitRemote: {type: ['string', 'null'], maxLength: 2000},
          },
        },
      },
    },
    async (request) => ({project: await projects.update(ctxOf(request), (request.params as {id: string}).id, request.body as never)}),
  )

  app.delete(`${prefix}/:id`, {schema: {params: idParam}}, async (request) => ({
    project: await projects.delete(ctxOf(request), (request.params as {id: string}).id),
  }))

  app.get(`${prefix}/:id/members`, {schema: {params: idParam}}, async (request) => ({
    members: await projects.members(ctxOf(request), (request.params as {id: string}).id),
  }))

  app.post(
    `${prefix}/:id/members`,
    {
      schema: {
        params: idParam,
        body: {
          type: 'object',
          required: ['role'],
          additionalProperties: false,
          properties: {userId: {type: 'string', minLength: 1}, email: {type: 'string', minLength: 3}, role},
          anyOf: [{required: ['userId']}, {required: ['email']}],
        },
      },
    },
    async (request) => ({members: await projects.setMember(ctxOf(request), (request.params as {id: string}).id, request.body as never)}),
  )

  app.put(
    `${prefix}/:id/members/:userId`,
    {schema: {params: memberParams, body: {type: 'object', required: ['role'], additionalProperties: false, properties: {role}}}},
    async (request) => {
      const {id, userId} = request.params as {id: string; userId: string}
      return {members: await projects.setMember(ctxOf(request), id, {userId, role: (request.body as {role: string}).role})}
    },
  )

  app.delete(`${prefix}/:id/members/:userId`, {schema: {params: memberParams}}, async (request) => {
    const {id, userId} = request.params as {id: string; userId: string}
    return {members: await projects.removeMember(ctxOf(request), id, userId)}
  })
}
