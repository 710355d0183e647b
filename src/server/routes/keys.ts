import type {FastifyInstance} from 'fastify'
import {MAX_KEYS_CHARS, type KeysService} from '../../domain/keys/keys-service.js'
import {ctxOf} from '../plugins/auth.js'

const body = {type: 'object', required: ['keys'], additionalProperties: false, properties: {keys: {type: 'string', minLength: 1, maxLength: MAX_KEYS_CHARS}}} as const

/** Literal keystrokes to a running agent's terminal: `{keys: string}` -> 200 `{operationId, delivered: true}`. */
export function keysRoutes(app: FastifyInstance, keys: KeysService) {
  app.post('/api/v1/agents/:id/keys', {schema: {body}}, async (request) => {
    const {id} = request.params as {id: string}
    return keys.send(ctxOf(request), {ref: id}, (request.body as {keys: string}).keys)
  })
  for (const p of ['projects', 'groves']) {
    app.post(`/api/v1/${p}/:projectId/agents/:id/keys`, {schema: {body}}, async (request) => {
      const {id, projectId} = request.params as {id: string; projectId: string}
      return keys.send(ctxOf(request), {ref: id, projectRef: projectId}, (request.body as {keys: string}).keys)
    })
  }
}
