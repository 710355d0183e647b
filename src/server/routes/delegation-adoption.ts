import type {FastifyInstance, FastifyRequest} from 'fastify'
import type {AdoptionService, CommitBody, PlanBody, StatusQuery} from '../../domain/delegation/adoption-service.js'
import {requireAdoptionAdmin} from '../../domain/delegation/adoption-access.js'
import {ADOPTION_STATUS_ROUTE} from '../../domain/delegation/types.js'
import {ctxOf} from '../plugins/auth.js'

const id = {type: 'string', minLength: 1, maxLength: 200} as const
const ids = {type: 'array', items: id, minItems: 1, maxItems: 5000, uniqueItems: true} as const

const statusQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {status: id, reason: id, projectId: id, limit: {type: 'integer', minimum: 1, maximum: 500}, offset: {type: 'integer', minimum: 0}},
} as const

const scope = {type: 'object', additionalProperties: false, properties: {projectId: id, agentIds: ids}} as const
const fingerprint = {type: 'string', minLength: 1, maxLength: 200} as const

/** An adopt body or a revert body; a commit adds `planFingerprint` and an optional `planId`. */
function planBody(commit: boolean) {
  const extra = commit ? {planFingerprint: fingerprint, planId: id} : {}
  const required = commit ? ['planFingerprint'] : []
  return {
    oneOf: [
      {type: 'object', additionalProperties: false, required: ['operation', ...required], properties: {operation: {const: 'adopt'}, scope, ...extra}},
      {
        type: 'object',
        additionalProperties: false,
        required: ['operation', 'recordIds', ...required],
        properties: {operation: {const: 'revert'}, recordIds: ids, confirmOriginalEdgeIds: {type: 'object', additionalProperties: id, maxProperties: 5000}, ...extra},
      },
    ],
  }
}

/**
 * Refuses a caller who may not use these routes before its query or body is validated, so a
 * refused caller learns nothing of the schema (403 before 400). Broker-signed requests are
 * resolved after validation (their signature covers the body); the domain refuses them.
 */
async function gate(request: FastifyRequest) {
  if (request.callContext) requireAdoptionAdmin(request.callContext)
}

/** Delegation adoption admin API (docs/api.md); the domain decides who may call it. */
export function delegationAdoptionRoutes(adoption: AdoptionService) {
  return async (app: FastifyInstance) => {
    app.get(ADOPTION_STATUS_ROUTE, {preValidation: gate, schema: {querystring: statusQuery}}, async (request) => adoption.status(ctxOf(request), request.query as StatusQuery))
    app.post(`${ADOPTION_STATUS_ROUTE}/previews`, {preValidation: gate, schema: {body: planBody(false)}}, async (request) => adoption.preview(ctxOf(request), request.body as PlanBody))
    app.post(`${ADOPTION_STATUS_ROUTE}/commits`, {preValidation: gate, schema: {body: planBody(true)}}, async (request) => adoption.commit(ctxOf(request), request.body as CommitBody))
  }
}
