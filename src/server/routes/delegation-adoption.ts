import type {FastifyInstance, FastifyRequest} from 'fastify'
import type {AdoptionService, CommitBody, PlanBody, StatusQuery} from '../../domain/delegation/adoption-service.js'
import {requireAdoptionAdmin} from '../../domain/delegation/adoption-access.js'
import {ADOPTION_STATUS_ROUTE, EXCLUSION_REASONS, RECORD_STATUSES, SKIP_REASONS} from '../../domain/delegation/types.js'
import type {CallContext} from '../../domain/authz/context.js'
import {ctxOf} from '../plugins/auth.js'

const id = {type: 'string', minLength: 1, maxLength: 200} as const
const ids = {type: 'array', items: id, minItems: 1, maxItems: 5000, uniqueItems: true} as const

// A record's reason is its hop's exclusion reason or the reason a start-up pass skipped it; a
// filter naming anything else is a typo (`status=adopt`) that would read as "no records".
const statusQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: {enum: [...RECORD_STATUSES]},
    reason: {enum: [...EXCLUSION_REASONS, ...SKIP_REASONS]},
    projectId: id,
    limit: {type: 'integer', minimum: 1, maximum: 500},
    offset: {type: 'integer', minimum: 0},
  },
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
 * Refuses a caller who may not use these routes before its query or body is looked at, so a
 * refused caller learns nothing of the schema (403 before 400), whatever its credential: the
 * schema's verdict is attached (`attachValidation`) and thrown only after the caller passed.
 * Broker-signed requests are resolved after validation (their signature covers the body), so
 * the check runs in the handler, where every caller is known.
 */
function admitted(request: FastifyRequest): CallContext {
  const ctx = ctxOf(request)
  requireAdoptionAdmin(ctx)
  if (request.validationError) throw request.validationError
  return ctx
}

/** Delegation adoption admin API (docs/api.md); the domain decides who may call it. */
export function delegationAdoptionRoutes(adoption: AdoptionService) {
  return async (app: FastifyInstance) => {
    const opts = {attachValidation: true}
    app.get(ADOPTION_STATUS_ROUTE, {...opts, schema: {querystring: statusQuery}}, async (request) => adoption.status(admitted(request), request.query as StatusQuery))
    app.post(`${ADOPTION_STATUS_ROUTE}/previews`, {...opts, schema: {body: planBody(false)}}, async (request) => adoption.preview(admitted(request), request.body as PlanBody))
    app.post(`${ADOPTION_STATUS_ROUTE}/commits`, {...opts, schema: {body: planBody(true)}}, async (request) => adoption.commit(admitted(request), request.body as CommitBody))
  }
}
