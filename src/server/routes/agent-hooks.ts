import type {FastifyInstance} from 'fastify'
import type {HookReports} from '../../domain/agents/hook-reports.js'
import {bearerOf, ctxOf} from '../plugins/auth.js'

/** A tool's input can hold a whole file (Claude Code's Write): more than the Hub's default body limit. */
const HOOK_BODY_LIMIT = 8 * 1024 * 1024

/**
 * `POST /api/v1/agents/:id/hooks/claude`: Claude Code's HTTP hooks (domain/agents/hook-reports.ts).
 * The body is Claude Code's hook input; the answer `{}` is an empty hook output. The credential
 * is resolved here (the route's own onRequest, before the maintenance gate, which lets an
 * agent's liveness reports through), not by the Hub's bearer resolution.
 */
export function agentHookRoutes(app: FastifyInstance, hooks: HookReports) {
  const params = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1, maxLength: 200}}} as const
  app.post(
    '/api/v1/agents/:id/hooks/claude',
    {
      config: {auth: false, quietLog: true, livenessReport: true},
      bodyLimit: HOOK_BODY_LIMIT,
      schema: {params, body: {type: 'object'}},
      onRequest: async (request) => {
        request.callContext = await hooks.authenticate(bearerOf(request), (request.params as {id: string}).id, request.id)
      },
    },
    async (request) => {
      await hooks.report(ctxOf(request), (request.params as {id: string}).id, 'claude', request.body)
      return {}
    },
  )
}
