import type {FastifyInstance, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {CallContext} from '../../domain/authz/context.js'
import type {Authenticate} from '../../domain/auth/credentials.js'

export const SESSION_COOKIE = 'svc_session'

declare module 'fastify' {
  interface FastifyRequest {
    callContext: CallContext | null
  }
  interface FastifyContextConfig {
    /** false: the route needs no credential. */
    auth?: boolean
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function bearerOf(request: FastifyRequest): string | null {
  const h = request.headers.authorization
  if (!h) return null
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  if (!m) throw new AppError('unauthorized', 'Authorization header must be "Bearer <token>"')
  return m[1]
}

/**
 * Whether an Origin header names the host the request was sent to. Default ports compare equal
 * (`Host: hub:80` and `Origin: http://hub`); an opaque `null` origin or anything unparsable
 * never matches.
 */
function sameHost(origin: string, host: string): boolean {
  try {
    const o = new URL(origin)
    return o.host === new URL(`${o.protocol}//${host}`).host
  } catch {
    return false
  }
}

/**
 * A cookie rides along on cross-site requests, so a state-changing request authenticated by the
 * session cookie must come from the Hub's own pages (same origin).
 */
function assertSameOrigin(request: FastifyRequest) {
  if (SAFE_METHODS.has(request.method)) return
  const site = request.headers['sec-fetch-site']
  if (site === 'same-origin') return
  const origin = request.headers.origin
  const host = request.headers.host
  if (origin && host && sameHost(origin, host)) return
  throw new AppError('forbidden', 'cross-site request refused: send the session as a Bearer token, or from the Hub\'s own pages')
}

/** Resolves the caller of every route that needs one; routes read `request.callContext`. */
export function installAuth(app: FastifyInstance, authenticate: Authenticate) {
  app.decorateRequest('callContext', null)
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.auth === false || !request.routeOptions.url) return
    let secret = bearerOf(request)
    if (!secret) {
      secret = request.cookies?.[SESSION_COOKIE] ?? null
      if (secret) assertSameOrigin(request)
    }
    const found = await authenticate(secret)
    request.callContext = {...found, requestId: request.id}
  })
}

/** The caller of an authenticated route. */
export function ctxOf(request: FastifyRequest): CallContext {
  if (!request.callContext) throw new AppError('unauthorized', 'missing or invalid credential')
  return request.callContext
}
