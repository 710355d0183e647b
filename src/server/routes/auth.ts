import type {FastifyInstance} from 'fastify'
import type {AccessTokens} from '../../domain/auth/access-tokens.js'
import type {Sessions} from '../../domain/auth/sessions.js'
import {ctxOf, SESSION_COOKIE} from '../plugins/auth.js'

const idParam = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}} as const

/** `/api/v1/auth`: who am I, sign out, and user access tokens. */
export function authRoutes(app: FastifyInstance, deps: {accessTokens: AccessTokens; sessions: Sessions}) {
  app.get('/api/v1/auth/me', async (request) => {
    const ctx = ctxOf(request)
    const p = ctx.principal
    return {
      principal: p.kind === 'user' ? {kind: 'user', id: p.id, email: p.email, displayName: p.displayName} : {...p},
      credentialKind: ctx.credentialKind,
      systemAdmin: p.kind === 'user' && p.systemAdmin,
      ...(ctx.forUser && {forUser: ctx.forUser}),
      ...(ctx.bounds && {token: {id: ctx.bounds.tokenId, projectId: ctx.bounds.projectId, permissions: [...ctx.bounds.permissions].sort()}}),
    }
  })

  app.post('/api/v1/auth/logout', {config: {auth: false}}, async (request, reply) => {
    const header = /^Bearer\s+(\S+)/i.exec(request.headers.authorization ?? '')?.[1]
    const secret = header ?? request.cookies?.[SESSION_COOKIE]
    if (secret) await deps.sessions.revoke(secret)
    reply.clearCookie(SESSION_COOKIE, {path: '/'})
    return {signedOut: true}
  })

  app.post(
    '/api/v1/auth/tokens',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name', 'projectId', 'permissions'],
          additionalProperties: false,
          properties: {
            name: {type: 'string', minLength: 1, maxLength: 200},
            projectId: {type: 'string', minLength: 1},
            permissions: {type: 'array', items: {type: 'string'}, minItems: 1, maxItems: 100},
            expiresAt: {type: 'string', minLength: 1},
          },
        },
      },
    },
    async (request, reply) => {
      const created = await deps.accessTokens.create(ctxOf(request), request.body as never)
      return reply.code(201).send(created)
    },
  )

  app.get('/api/v1/auth/tokens', async (request) => ({tokens: await deps.accessTokens.list(ctxOf(request))}))

  app.delete('/api/v1/auth/tokens/:id', {schema: {params: idParam}}, async (request) => {
    const {id} = request.params as {id: string}
    return {token: await deps.accessTokens.revoke(ctxOf(request), id)}
  })
}
