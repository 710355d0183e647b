import type {FastifyInstance, FastifyRequest} from 'fastify'
import type {MessagesService} from '../../domain/messages/messages-service.js'
import {ctxOf} from '../plugins/auth.js'
import {AppError} from '../../api/app-error.js'
import {parseJson} from '../plugins/json.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const
type P = {id?: string; projectId?: string; scheduleId?: string}

/**
 * Message ingresses. Their bodies are parsed leniently (a body that is not JSON reaches the
 * service as undefined with its text) because the spec orders the checks: an unknown target is
 * 404 first, then any raw field — even in a malformed body — is 422, and only then is anything
 * else about the body judged.
 */
export async function messageRoutes(app: FastifyInstance, messages: MessagesService) {
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json')
    scope.addContentTypeParser('application/json', {parseAs: 'string'}, (request, body, done) => {
      request.rawBody = body as string
      try {
        done(null, body === '' ? undefined : parseJson(body as string))
      } catch (err) {
        // Too deep is refused before anything walks the body; other malformed text goes on (above).
        if (err instanceof AppError) return done(err, undefined)
        done(null, undefined)
      }
    })
    const params = (r: FastifyRequest) => r.params as P
    const raw = (r: FastifyRequest) => r.rawBody ?? null

    scope.post('/api/v1/agents/:id/message', {schema: {params: {type: 'object', properties: {id: str}}}}, async (request, reply) =>
      reply.code(202).send(await messages.sendToAgent(ctxOf(request), {ref: params(request).id!}, request.body, raw(request))),
    )
    for (const p of ['projects', 'groves']) {
      const projectParams = {type: 'object', properties: {projectId: str, id: str, scheduleId: str}}
      scope.post(`/api/v1/${p}/:projectId/agents/:id/message`, {schema: {params: projectParams}}, async (request, reply) =>
        reply.code(202).send(await messages.sendToAgent(ctxOf(request), {ref: params(request).id!, projectRef: params(request).projectId}, request.body, raw(request))),
      )
      scope.post(`/api/v1/${p}/:projectId/broadcast`, {schema: {params: projectParams}}, async (request, reply) =>
        reply.code(202).send(await messages.broadcast(ctxOf(request), params(request).projectId!, request.body, raw(request))),
      )
      for (const [path, kind, key] of [
        ['scheduled-events', 'once', 'scheduledEvent'],
        ['schedules', 'recurring', 'schedule'],
      ] as const) {
        scope.post(`/api/v1/${p}/:projectId/${path}`, {schema: {params: projectParams}}, async (request, reply) =>
          reply.code(201).send({[key]: await messages.schedule(ctxOf(request), params(request).projectId!, request.body, raw(request), kind)}),
        )
        scope.get(`/api/v1/${p}/:projectId/${path}`, {schema: {params: projectParams}}, async (request) => ({
          [`${key}s`]: await messages.listSchedules(ctxOf(request), params(request).projectId!, kind),
        }))
        scope.delete(`/api/v1/${p}/:projectId/${path}/:scheduleId`, {schema: {params: projectParams}}, async (request) => {
          await messages.cancelSchedule(ctxOf(request), params(request).projectId!, params(request).scheduleId!)
          return {cancelled: true}
        })
      }
    }
    scope.post('/api/v1/broker/inbound', async (request, reply) => reply.code(202).send(await messages.inbound(ctxOf(request), request.body, raw(request), false)))
    scope.post('/api/v1/broker/inbound/routed', async (request, reply) => reply.code(202).send(await messages.inbound(ctxOf(request), request.body, raw(request), true)))
  })

  const modeBody = {type: 'object', required: ['mode'], additionalProperties: false, properties: {mode: {type: 'string', enum: ['open', 'closed']}}} as const
  for (const base of ['/api/v1/agents/:id', '/api/v1/projects/:projectId/agents/:id', '/api/v1/groves/:projectId/agents/:id']) {
    app.put(`${base}/message-mode`, {schema: {body: modeBody}}, async (request) => {
      const p = request.params as P
      return messages.setMode(ctxOf(request), p.id!, (request.body as {mode: 'open' | 'closed'}).mode, p.projectId)
    })
    app.get(`${base}/messages`, async (request) => {
      const p = request.params as P
      return {messages: await messages.history(ctxOf(request), p.id!, p.projectId)}
    })
  }
}
