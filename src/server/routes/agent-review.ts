import type {FastifyInstance, FastifyRequest} from 'fastify'
import {DIFF_MAX_BYTES, type ReviewService} from '../../domain/agents/review-service.js'
import {ctxOf} from '../plugins/auth.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const
const diffQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Largest patch answered (bytes); the file list is always complete.
    maxBytes: {type: 'integer', minimum: 1024, maximum: DIFF_MAX_BYTES},
    // Files and counts only, no patch.
    stat: {type: 'boolean'},
  },
} as const
const mergeBody = {
  type: 'object',
  additionalProperties: false,
  properties: {strategy: {type: 'string', enum: ['merge', 'squash']}, message: {type: 'string', minLength: 1, maxLength: 10_000}},
} as const
const emptyBody = {type: 'object', additionalProperties: false, properties: {}} as const

type Params = {id: string; projectId?: string}

/**
 * Reviewing and landing an agent's work, at `/api/v1/agents/:id/{diff,merge,push}` and in the
 * project-scoped forms (`/api/v1/projects/:projectId/agents/:id/...`, `/groves/...`).
 */
export function agentReviewRoutes(app: FastifyInstance, review: ReviewService) {
  const forms: Array<{base: string; params: object}> = [
    {base: '/api/v1/agents/:id', params: {type: 'object', required: ['id'], properties: {id: str}}},
    ...['projects', 'groves'].map((p) => ({
      base: `/api/v1/${p}/:projectId/agents/:id`,
      params: {type: 'object', required: ['id', 'projectId'], properties: {id: str, projectId: str}},
    })),
  ]
  const ref = (request: FastifyRequest) => request.params as Params
  for (const {base, params} of forms) {
    app.get(`${base}/diff`, {schema: {params, querystring: diffQuery}}, async (request) =>
      review.diff(ctxOf(request), ref(request).id, request.query as {maxBytes?: number; stat?: boolean}, ref(request).projectId),
    )
    app.post(`${base}/merge`, {schema: {params, body: mergeBody}}, async (request) =>
      review.merge(ctxOf(request), ref(request).id, (request.body ?? {}) as {strategy?: 'merge' | 'squash'; message?: string}, ref(request).projectId),
    )
    app.post(`${base}/push`, {schema: {params, body: emptyBody}}, async (request) => review.push(ctxOf(request), ref(request).id, ref(request).projectId))
  }
}
