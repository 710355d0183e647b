import type {FastifyInstance, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {Authenticate} from '../../domain/auth/credentials.js'
import type {CallContext} from '../../domain/authz/context.js'
import {TOKEN_SEGMENT} from '../../domain/ports/preview-token.js'
import type {PortsService} from '../../domain/ports/ports-service.js'
import {ctxOf, SESSION_COOKIE} from '../plugins/auth.js'
import {preflight, relayHttp, relayUpgrade, upgradeHead, type PreviewTarget} from '../preview-proxy.js'
import {holdForUpgrade, joinWebSocket, takeHeld} from '../upgrade-hold.js'
import {isUpgrade} from './agent-streams.js'

const PREVIEW = /^\/agents\/([^/?#]+)\/ports\/(\d{1,5})(\/[^?#]*)?$/
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

/** A browser opening a page (not a script, the CLI or a page's own request). */
const isNavigation = (request: FastifyRequest) => request.method === 'GET' && (request.headers['sec-fetch-mode'] === 'navigate' || (!request.headers['sec-fetch-mode'] && /\btext\/html\b/.test(request.headers.accept ?? '')))

/** The `ws` head bytes @fastify/websocket keeps on an upgrade request (read after the headers). */
function upgradeHeadBytes(request: FastifyRequest): Buffer {
  const raw = request.raw as unknown as Record<symbol, unknown>
  const key = Object.getOwnPropertySymbols(raw).find((s) => s.description === 'ws-head')
  const head = key ? raw[key] : undefined
  return Buffer.isBuffer(head) ? head : Buffer.alloc(0)
}

/**
 * An agent's ports: `GET /api/v1/agents/:id/ports`, the raw connection of `svc agent forward`
 * (`GET /api/v1/agents/:id/ports/:port/connect`, a WebSocket of binary frames), and previews at
 * `/agents/<id>/ports/<port>/...` (HTTP and WebSocket, when `auto_expose_ports.enabled`).
 */
export function agentPortRoutes(ports: PortsService, authenticate: Authenticate) {
  return async (app: FastifyInstance) => {
    const params = {type: 'object', required: ['id'], properties: {id: {type: 'string', minLength: 1}}}
    // URLs name the Hub as the caller reached it (a Hub behind a proxy: its public URL's host).
    app.get('/api/v1/agents/:id/ports', {schema: {params}}, async (request) =>
      ports.list(ctxOf(request), (request.params as {id: string}).id, request.headers.host ? `${request.protocol}://${request.headers.host}` : undefined),
    )

    app.route({
      method: 'GET',
      url: '/api/v1/agents/:id/ports/:port/connect',
      schema: {params: {type: 'object', required: ['id', 'port'], properties: {id: {type: 'string', minLength: 1}, port: {type: 'integer', minimum: 1, maximum: 65535}}}},
      preHandler: async (request) => {
        const p = request.params as {id: string; port: number}
        // Opened before the upgrade (a refusal answers it); closed with the caller's socket
        // unless the upgrade hands it to wsHandler.
        holdForUpgrade(request, (await ports.connect(ctxOf(request), p.id, p.port)).stream)
      },
      handler: async (request, reply) => {
        takeHeld(request)?.destroy()
        return reply.code(426).header('upgrade', 'websocket').send({error: {code: 'invalid_request', message: 'a port connection needs a WebSocket upgrade', requestId: request.id}})
      },
      wsHandler: (socket, request) => {
        const stream = takeHeld(request)
        if (!stream) return socket.close(1011, 'no stream')
        joinWebSocket(socket, stream)
      },
    })

    // Previews: their bodies are the agent's, streamed as they come (never parsed here), and
    // their credential is checked here (a bearer, the session cookie or a preview link's token).
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers()
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
      const preview = async (request: FastifyRequest, reply: Parameters<typeof relayHttp>[1]) => {
        const raw = request.raw.url ?? ''
        const q = raw.indexOf('?')
        const m = PREVIEW.exec(q < 0 ? raw : raw.slice(0, q))
        if (!m) throw new AppError('not_found', 'no such preview path')
        const [, id, portText, rest = ''] = m
        const port = Number(portText)
        const query = q < 0 ? '' : raw.slice(q)
        const prefix = `/agents/${id}/ports/${port}`
        if (!rest) return reply.redirect(`${prefix}/${query}`, 308)
        await ports.requirePreviews()
        const first = rest.split('/')[1] ?? ''
        const token = TOKEN_SEGMENT.exec(first)?.[1]
        const path = token ? rest.slice(first.length + 1) || '/' : rest
        if (token && request.method === 'OPTIONS' && request.headers['access-control-request-method']) return preflight(request, reply)
        const ctx = token ? await ports.previewCaller(token, id, port, request.id) : await caller(request)
        if (!ctx) {
          if (isNavigation(request)) return reply.header('cache-control', 'no-store').redirect(`/?return_to=${encodeURIComponent(raw)}`, 303)
          throw new AppError('unauthorized', 'missing or invalid credential')
        }
        // A signed-in browser moves onto a preview link: the page's own requests (sent without
        // cookies from its sandbox) then carry the token in their path.
        if (!token && !request.headers.authorization && isNavigation(request)) {
          const minted = ports.previewToken(ctx, id, port)
          if (minted) return reply.header('cache-control', 'no-store').redirect(`${prefix}/~${minted}${path}${query}`, 303)
        }
        const {stream} = await ports.connect(ctx, id, port)
        const target: PreviewTarget = {prefix: token ? `${prefix}/~${token}` : prefix, path: `${path}${query}`, port, tokenPath: !!token}
        if (isUpgrade(request)) {
          reply.hijack()
          return relayUpgrade(request.raw.socket, upgradeHeadBytes(request), stream, upgradeHead(request, target))
        }
        return relayHttp(request, reply, stream, target)
      }
      for (const url of ['/agents/:id/ports/:port', '/agents/:id/ports/:port/*']) {
        scope.route({method: [...METHODS], url, config: {auth: false}, preHandler: preview, handler: async () => {}})
      }
    })

    /** A bearer or the session cookie (from the Hub's own pages only, for a change); null with neither. */
    async function caller(request: FastifyRequest): Promise<CallContext | null> {
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1]
      const cookie = request.cookies?.[SESSION_COOKIE]
      if (!bearer && !cookie) return null
      if (!bearer && !['GET', 'HEAD', 'OPTIONS'].includes(request.method) && request.headers['sec-fetch-site'] !== 'same-origin') {
        throw new AppError('forbidden', 'cross-site request refused: send the session as a Bearer token')
      }
      return {...(await authenticate(bearer ?? cookie)), requestId: request.id}
    }
  }
}
