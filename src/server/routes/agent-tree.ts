import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'
import {pickAttempt} from '../../domain/teams/pick.js'
import type {TeamsService} from '../../domain/teams/tree.js'
import type {Services} from '../../domain/services.js'
import {ctxOf} from '../plugins/auth.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const
const pickBody = {type: 'object', additionalProperties: false, properties: {strategy: {type: 'string', enum: ['merge', 'squash']}}} as const

/**
 * Teams routes at `/api/v1/agents/:id/...` and the project-scoped forms: `GET .../tree` (an
 * agent's lineage with subtree totals) and `POST .../pick` (keep one attempt of a group).
 */
export function agentTreeRoutes(app: FastifyInstance, teams: TeamsService, s: Pick<Services, 'agents' | 'review'>) {
  const forms = [
    {base: '/api/v1/agents/:id', params: {type: 'object', required: ['id'], properties: {id: str}}},
    ...['projects', 'groves'].map((p) => ({base: `/api/v1/${p}/:projectId/agents/:id`, params: {type: 'object', required: ['id', 'projectId'], properties: {id: str, projectId: str}}})),
  ]
  for (const {base, params} of forms) {
    // The domain answers the JSON as bytes (built node by node: teams/tree.ts), sent as they are.
    app.get(`${base}/tree`, {schema: {params}}, async (request: FastifyRequest, reply: FastifyReply) => {
      const p = request.params as {id: string; projectId?: string}
      const {json} = await teams.tree(ctxOf(request), p.id, p.projectId)
      return reply.type('application/json; charset=utf-8').send(json)
    })
    app.post(`${base}/pick`, {schema: {params, body: pickBody}}, async (request: FastifyRequest) => {
      const p = request.params as {id: string; projectId?: string}
      return pickAttempt(s, ctxOf(request), p.id, (request.body ?? {}) as {strategy?: 'merge' | 'squash'}, p.projectId)
    })
  }
}
