import type {FastifyInstance, FastifyRequest} from 'fastify'
import {APPROVAL_STATES} from '../../api/approval.js'
import {POLL_MAX_S, type ApprovalsService} from '../../domain/approvals/approvals-service.js'
import {ctxOf} from '../plugins/auth.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const
const stateQuery = {type: 'object', additionalProperties: false, properties: {state: {type: 'string', enum: [...APPROVAL_STATES]}}} as const
const getQuery = {type: 'object', additionalProperties: false, properties: {wait: {type: 'integer', minimum: 0, maximum: POLL_MAX_S}}} as const
// `decision` is checked by the domain (400 with the values), so every client gets one message.
const decisionBody = {type: 'object', additionalProperties: false, properties: {decision: {}, reason: {type: 'string', maxLength: 2000}}} as const
const requestBody = {
  type: 'object',
  required: ['tool'],
  additionalProperties: false,
  properties: {tool: {type: 'string', minLength: 1, maxLength: 200}, summary: {type: 'string', maxLength: 100_000}, input: {}, waitSeconds: {type: 'integer', minimum: 1, maximum: 86_400}},
} as const

/**
 * Approvals (CONTRACT "Approvals"): the inbox of what the caller may decide, an agent's
 * approvals, one approval (long-polled by the hook that waits on it), a decision, and the
 * request an agent's hook makes.
 */
export function approvalRoutes(approvals: ApprovalsService) {
  return async (app: FastifyInstance) => {
    app.get('/api/v1/approvals', {schema: {querystring: stateQuery}}, async (request) => ({
      approvals: await approvals.list(ctxOf(request), (request.query as {state?: string}).state),
    }))
    app.get('/api/v1/approvals/:id', {config: {quietLog: true}, schema: {params: {type: 'object', required: ['id'], properties: {id: str}}, querystring: getQuery}}, async (request) => ({
      approval: await approvals.get(ctxOf(request), (request.params as {id: string}).id, (request.query as {wait?: number}).wait ?? 0),
    }))
    app.post('/api/v1/approvals/:id/decision', {schema: {params: {type: 'object', required: ['id'], properties: {id: str}}, body: decisionBody}}, async (request) => ({
      approval: await approvals.decide(ctxOf(request), (request.params as {id: string}).id, (request.body ?? {}) as {decision?: unknown; reason?: unknown}),
    }))
    const forms = [
      {base: '/api/v1/agents/:id', params: {type: 'object', required: ['id'], properties: {id: str}}},
      ...['projects', 'groves'].map((p) => ({base: `/api/v1/${p}/:projectId/agents/:id`, params: {type: 'object', required: ['id', 'projectId'], properties: {id: str, projectId: str}}})),
    ]
    const ref = (request: FastifyRequest) => request.params as {id: string; projectId?: string}
    for (const {base, params} of forms) {
      app.get(`${base}/approvals`, {schema: {params, querystring: stateQuery}}, async (request) => ({
        approvals: await approvals.listForAgent(ctxOf(request), ref(request).id, {state: (request.query as {state?: string}).state, projectRef: ref(request).projectId}),
      }))
    }
    // The agent's own hook asks; it is answered the approval (decided at once when a rule matched).
    app.post('/api/v1/agents/:id/approvals', {config: {quietLog: true}, schema: {params: forms[0].params, body: requestBody}}, async (request, reply) => {
      const approval = await approvals.request(ctxOf(request), ref(request).id, request.body as never)
      return reply.code(201).send({approval})
    })
  }
}
