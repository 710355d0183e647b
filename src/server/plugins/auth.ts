import cookiePlugin from '@fastify/cookie'
import type {FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {CallContext} from '../../domain/authz/context.js'
import type {Authenticate, Authenticated} from '../../domain/auth/credentials.js'
import {SIGNATURE_HEADERS} from '../../api/broker-signing.js'
import {parseJson} from './json.js'
import type {AuthFailureThrottle} from '../../domain/auth/failure-throttle.js'

/** Verifies a broker-signed request and returns the broker ID (401 otherwise). */
export type VerifyBroker = (headers: FastifyRequest['headers'], method: string, url: string, body: string) => Promise<string>

export const SESSION_COOKIE = 'svc_session'

declare module 'fastify' {
  interface FastifyRequest {
    callContext: CallContext | null
    /** The request body exactly as received (JSON routes), for signature checks. */
    rawBody?: string
  }
  interface FastifyContextConfig {
    /** false: the route needs no credential. */
    auth?: boolean
    /** true: the access-log line of this route is written at debug level (hot or health routes). */
    quietLog?: boolean
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The secret of an `Authorization: Bearer` header; null without one, 401 for another form. */
export function bearerOf(request: FastifyRequest): string | null {
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

/** Synchronous lookup of an already resolved credential (agent tokens: agent-tokens.ts `cached`). */
export type CachedCredential = (secret: string) => Authenticated | null

/**
 * How a request's caller is resolved, as steps a route's hooks run: `bearer` (onRequest: an
 * `Authorization: Bearer` secret, else the session cookie) and `signed` (preHandler: a
 * broker-signed request, verified after the body is read because the signature covers its hash).
 * Every refused credential counts against the client's address; past the limit, 429.
 * installAuth runs them for every route; a hot route (the status report) runs them itself.
 */
export function callerResolution(authenticate: Authenticate, verifyBroker?: VerifyBroker, throttle?: AuthFailureThrottle, cached?: CachedCredential) {
  const counted = async <T>(request: FastifyRequest, check: () => Promise<T>): Promise<T> => {
    throttle?.check(request.ip)
    try {
      return await check()
    } catch (err) {
      refused(request, err)
      throw err
    }
  }
  const refused = (request: FastifyRequest, err: unknown) => {
    if (err instanceof AppError && err.code === 'unauthorized') throttle?.fail(request.ip)
  }
  // Left to `signed`: a request with a broker signature and no Authorization header.
  const brokerSigned = (request: FastifyRequest) => verifyBroker !== undefined && !request.headers.authorization && typeof request.headers[SIGNATURE_HEADERS.signature] === 'string'
  const secretOf = (request: FastifyRequest): string | null => {
    const bearer = bearerOf(request)
    if (bearer) return bearer
    // Routes outside the cookie plugin's scope parse the header themselves.
    const cookies = request.cookies ?? (request.headers.cookie ? cookiePlugin.fastifyCookie.parse(request.headers.cookie) : undefined)
    const session = cookies?.[SESSION_COOKIE] ?? null
    if (session) assertSameOrigin(request)
    return session
  }
  const bearer = async (request: FastifyRequest): Promise<void> => {
    if (brokerSigned(request)) return
    const found = await counted(request, async () => authenticate(secretOf(request)))
    request.callContext = {...found, requestId: request.id}
  }
  return {
    bearer,
    /**
     * `bearer` as a callback hook that answers without a promise when the credential is in
     * `cached` (an agent's token on its status reports); anything else takes `bearer`.
     */
    bearerHook(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
      let hit: Authenticated | null = null
      try {
        // In `counted`'s order: a throttled address is refused before its credential is read.
        throttle?.check(request.ip)
        // A broker-signed request has no Authorization header, so no bearer: it takes `bearer`.
        const secret = cached ? bearerOf(request) : null
        if (secret) hit = cached!(secret)
      } catch (err) {
        refused(request, err)
        return done(err as Error)
      }
      if (!hit) return void bearer(request).then(() => done(), done)
      request.callContext = {...hit, requestId: request.id}
      done()
    },
    async signed(request: FastifyRequest): Promise<void> {
      if (request.callContext || !verifyBroker || typeof request.headers[SIGNATURE_HEADERS.signature] !== 'string') return
      const brokerId = await counted(request, () => verifyBroker(request.headers, request.method, request.url, request.rawBody ?? ''))
      // A request the broker makes for a user (the user ID is covered by the signature) keeps the
      // broker's authority, never the user's: the kind lets user-only routes recognise and refuse it.
      const forUser = request.headers[SIGNATURE_HEADERS.forUser]
      request.callContext =
        typeof forUser === 'string' && forUser
          ? {principal: {kind: 'broker', id: brokerId}, credentialKind: 'broker_for_user', forUser, requestId: request.id}
          : {principal: {kind: 'broker', id: brokerId}, credentialKind: 'broker', requestId: request.id}
    },
  }
}

export type CallerResolution = ReturnType<typeof callerResolution>

/**
 * The request decorations and the JSON body parser every route shares (the body kept as
 * received so a signature over it can be checked). Registered on the root instance.
 */
export function installRequestBasics(app: FastifyInstance) {
  app.decorateRequest('callContext', null)
  app.decorateRequest('rawBody', undefined)
  app.addContentTypeParser('application/json', {parseAs: 'string'}, (request, body, done) => {
    const text = body as string
    request.rawBody = text
    if (text === '') {
      const err = Object.assign(new Error('empty JSON body'), {code: 'FST_ERR_CTP_EMPTY_JSON_BODY', statusCode: 400})
      return done(err, undefined)
    }
    try {
      done(null, parseJson(text))
    } catch (err) {
      if (err instanceof AppError) return done(err, undefined)
      done(Object.assign(new Error('invalid JSON body'), {code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400}), undefined)
    }
  })
}

/** Resolves the caller of every route of `app`'s scope that needs one; routes read `request.callContext`. */
export function installAuth(app: FastifyInstance, resolution: CallerResolution) {
  app.addHook('preHandler', async (request) => {
    if (request.callContext || request.routeOptions.config?.auth === false || !request.routeOptions.url) return
    await resolution.signed(request)
  })
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.auth === false || !request.routeOptions.url) return
    await resolution.bearer(request)
  })
}

/** The caller of an authenticated route. */
export function ctxOf(request: FastifyRequest): CallContext {
  if (!request.callContext) throw new AppError('unauthorized', 'missing or invalid credential')
  return request.callContext
}
