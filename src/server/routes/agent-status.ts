import type {FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction} from 'fastify'
import type {AgentsService} from '../../domain/agents/agents-service.js'
import type {Logger} from 'pino'
import {ctxOf, type CallerResolution} from '../plugins/auth.js'
import {lazyChildLogger} from '../lazy-logger.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const
const statusBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    phase: {type: 'string'},
    activity: {type: 'string'},
    detail: {type: 'string', maxLength: 10_000},
    heartbeat: {type: 'boolean'},
    // From a harness's hooks: the turn ended (counted for max_turns), and the session's usage totals.
    // A harness's API, auth or network failure (null: cleared, e.g. by the next turn).
    error: {type: ['string', 'null'], maxLength: 10_000},
    turnEnded: {type: 'boolean'},
    usage: {
      type: 'object',
      additionalProperties: false,
      required: ['sessionId', 'inputTokens', 'outputTokens', 'modelCalls'],
      properties: {
        sessionId: {type: 'string', minLength: 1, maxLength: 200},
        inputTokens: {type: 'integer', minimum: 0},
        outputTokens: {type: 'integer', minimum: 0},
        cacheReadTokens: {type: 'integer', minimum: 0},
        cacheWriteTokens: {type: 'integer', minimum: 0},
        modelCalls: {type: 'integer', minimum: 0},
        costUsd: {type: 'number', minimum: 0},
        model: {type: 'string', maxLength: 200},
      },
    },
  },
} as const

// The answer of every stored report, serialized once.
const OK = '{"ok":true}'

export interface StatusRouteHooks {
  resolution: CallerResolution
  /** The maintenance gate's decision (plugins/maintenance.ts); absent without settings. */
  maintenance?: (request: FastifyRequest) => void
}

/**
 * `POST /api/v1/agents/:id/status` (and its project-scoped forms): an agent's status report,
 * the Hub's most frequent request. Registered on the root instance, outside the scope of the
 * Hub's generic hooks (app.ts), so a report runs only what it needs, each step once: the caller
 * from the agent-token cache without a promise (plugins/auth.ts `bearerHook`; anything else
 * takes the generic resolution), no per-request child logger unless it logs, the body parsed
 * and checked by the schema compiled at start,
 * the broker signature and the maintenance gate (a liveness report passes it), one domain call,
 * and a constant answer. Status codes, envelopes and limits are those of every other route.
 */
export function agentStatusRoutes(app: FastifyInstance, agents: AgentsService, hooks: StatusRouteHooks) {
  const forms = [
    {base: '/api/v1/agents/:id', params: {type: 'object', required: ['id'], properties: {id: str}}},
    ...['projects', 'groves'].map((p) => ({
      base: `/api/v1/${p}/:projectId/agents/:id`,
      params: {type: 'object', required: ['id', 'projectId'], properties: {id: str, projectId: str}},
    })),
  ]
  const {resolution, maintenance} = hooks
  // After the body: a broker-signed request's caller (rare; a promise only then), then the gate.
  const preHandler = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const gate = () => {
      try {
        maintenance?.(request)
      } catch (err) {
        return done(err as Error)
      }
      done()
    }
    if (request.callContext) return gate()
    resolution.signed(request).then(gate, done)
  }
  for (const {base, params} of forms) {
    app.post(
      `${base}/status`,
      {
        config: {quietLog: true, livenessReport: true},
        schema: {params, body: statusBody},
        onRequest: resolution.bearerHook,
        preHandler,
        // No pino child per report: made only if the request logs.
        childLoggerFactory: (logger, bindings, opts) => lazyChildLogger(logger as Logger, bindings, opts) as never,
      },
      async (request, reply) => {
        await agents.reportStatus(ctxOf(request), (request.params as {id: string}).id, request.body as never)
        return reply.type('application/json; charset=utf-8').send(OK)
      },
    )
  }
}
