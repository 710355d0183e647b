import type {FastifyInstance, FastifyRequest} from 'fastify'
import type {TeamsService} from '../../domain/teams/tree.js'
import {ctxOf} from '../plugins/auth.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const

/** `GET /api/v1/agents/:id/tree` and its project-scoped forms: an agent's lineage with subtree totals. */
export function agentTreeRoutes(app: FastifyInstance, teams: TeamsService) {
  const forms = [
    {base: '/api/v1/agents/:id', params: {type: 'object', required: ['id'], properties: {id: str}}},
    ...['projects', 'groves'].map((p) => ({base: `/api/v1/${p}/:projectId/agents/:id`, params: {type: 'object', required: ['id', 'projectId'], properties: {id: str, projectId: str}}})),
  ]
  for (const {base, params} of forms) {
    app.get(`${base}/tree`, {schema: {params}}, async (request: FastifyRequest) => {
      const p = request.params as {id: string; projectId?: string}
      return teams.tree(ctxOf(request), p.id, p.projectId)
    })
  }
}
