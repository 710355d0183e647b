import type {FastifyInstance} from 'fastify'
import {MAX_REPORTED_EVENTS} from '../../telemetry/reported.js'
import type {HubTelemetry} from '../../telemetry/hub-telemetry.js'
import {ctxOf} from '../plugins/auth.js'

const event = {
  type: 'object',
  required: ['type'],
  properties: {
    type: {type: 'string', minLength: 1, maxLength: 200},
    time: {type: 'number'},
    attributes: {type: 'object', additionalProperties: {type: ['string', 'number', 'boolean']}},
  },
} as const

/**
 * Hub reporting of agents: `POST /api/v1/agents/:id/telemetry` with `{events: [...]}`, sent by the
 * agent itself every `telemetry.hub.report_interval`. Answers 202 with how many events were
 * accepted, before any export (the pipeline queues them).
 */
export function telemetryRoutes(telemetry: HubTelemetry) {
  return async (app: FastifyInstance) => {
    app.post(
      '/api/v1/agents/:id/telemetry',
      {
        config: {quietLog: true, livenessReport: true},
        schema: {
          params: {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1, maxLength: 200}}},
          body: {type: 'object', required: ['events'], additionalProperties: false, properties: {events: {type: 'array', maxItems: MAX_REPORTED_EVENTS, items: event}}},
        },
      },
      async (request, reply) => {
        const accepted = telemetry.fromAgent(ctxOf(request), (request.params as {id: string}).id, (request.body as {events: unknown[]}).events)
        return reply.code(202).send({accepted})
      },
    )
  }
}
