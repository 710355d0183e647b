import type {FastifyInstance} from 'fastify'
import type {ServerResponse} from 'node:http'
import {AppError} from '../../api/app-error.js'
import {agentEventOf, approvalRequestedOf} from '../../domain/events/agent-feed.js'
import type {EventsService} from '../../domain/events/events-service.js'
import {ctxOf} from '../plugins/auth.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const
const query = {type: 'object', additionalProperties: false, properties: {agentId: str, projectId: str, lastEventId: {type: 'string', maxLength: 30}}} as const

/**
 * `GET /api/v1/events`: Server-Sent Events of `agent` events (and `approval_requested`: a harness asks permission) (`id:` is the event's sequence, for
 * `Last-Event-ID` resume), with a comment line every `heartbeatMs` so proxies keep it open and
 * clients notice a dead connection.
 */
export function eventRoutes(events: EventsService, opts: {heartbeatMs?: number; hub?: () => {name: string; url: string}} = {}) {
  const heartbeatMs = opts.heartbeatMs ?? 15_000
  return async (app: FastifyInstance) => {
    const open = new Set<ServerResponse>()
    // Before the server stops listening: open streams would otherwise hold its close.
    app.addHook('preClose', async () => {
      for (const res of open) res.end()
    })
    app.get('/api/v1/events', {config: {quietLog: true}, schema: {querystring: query}}, async (request, reply) => {
      const ctx = ctxOf(request)
      const q = request.query as {agentId?: string; projectId?: string; lastEventId?: string}
      const last = (request.headers['last-event-id'] as string | undefined) ?? q.lastEventId
      if (last !== undefined && !/^\d{1,15}$/.test(last)) throw new AppError('validation_error', 'Last-Event-ID must be an event ID from this stream', {fields: [{path: 'Last-Event-ID', message: 'must be a non-negative integer'}]})
      const res = reply.raw
      let stop: (() => void) | null = null
      // Replayed events may be ready before the head is written: hold them until then.
      let held: string[] | null = []
      const writeEvent = (text: string) => {
        if (held) held.push(text)
        else if (!res.writableEnded) res.write(text)
      }
      // Subscribe before answering, so a refusal is still an error envelope.
      stop = await events.subscribe(ctx, {after: last === undefined ? undefined : Number(last), agentId: q.agentId, projectId: q.projectId}, (e) =>
        writeEvent(
          e.approval
            ? `id: ${e.seq}\nevent: approval_requested\ndata: ${JSON.stringify(approvalRequestedOf(e, opts.hub?.() ?? null))}\n\n`
            : `id: ${e.seq}\nevent: agent\ndata: ${JSON.stringify(agentEventOf(e))}\n\n`,
        ),
      )
      reply.hijack()
      res.writeHead(200, {'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', 'x-request-id': request.id})
      res.write('retry: 1000\n: connected\n\n' + held.join(''))
      held = null
      open.add(res)
      const heartbeat = setInterval(() => writeEvent(': heartbeat\n\n'), heartbeatMs)
      const end = () => {
        clearInterval(heartbeat)
        stop?.()
        open.delete(res)
      }
      request.raw.on('close', end)
      res.on('close', end)
    })
  }
}
