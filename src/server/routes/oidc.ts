import type {FastifyInstance, FastifyReply} from 'fastify'
import type {SignIn} from '../../domain/auth/sign-in.js'
import {VERIFIER} from '../../domain/auth/sign-in-input.js'
import {SESSION_COOKIE} from '../plugins/auth.js'

/** Binds a web sign-in to the browser that started it (checked at the callback). */
export const LOGIN_COOKIE = 'svc_login'
const CALLBACK_PATH = '/api/v1/auth/callback'

const str = (max: number) => ({type: 'string', minLength: 1, maxLength: max}) as const

// Sign-in answers carry secrets or one-time redirects: never cached by the browser or a proxy.
const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store')

/**
 * `/api/v1/auth` sign-in routes (none needs a credential): the web flow (`login` -> provider ->
 * `callback`), the CLI's code exchange, and the device flow. All logic is in `SignIn`.
 */
export function oidcRoutes(app: FastifyInstance, signIn: SignIn) {
  const cookieBase = {httpOnly: true, sameSite: 'lax', secure: signIn.secureCookies} as const

  app.get('/api/v1/auth/providers', {config: {auth: false}}, async () => ({oidc: await signIn.describe()}))

  app.get(
    '/api/v1/auth/login',
    {
      config: {auth: false},
      // No HEAD twin: a link prefetcher's HEAD would create flows (and, at the callback, spend one).
      exposeHeadRoute: false,
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {return_to: {type: 'string', maxLength: 2048}, cli_redirect: str(512), cli_state: str(200), cli_challenge: str(64)},
        },
      },
    },
    async (request, reply) => {
      const started = await signIn.startWeb(request.query as Record<string, string>)
      noStore(reply).setCookie(LOGIN_COOKIE, started.state, {...cookieBase, path: CALLBACK_PATH, expires: new Date(started.expiresAt)})
      return reply.redirect(started.url, 302)
    },
  )

  app.get(CALLBACK_PATH, {config: {auth: false}, exposeHeadRoute: false}, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>
    noStore(reply).clearCookie(LOGIN_COOKIE, {...cookieBase, path: CALLBACK_PATH})
    const done = await signIn.finishWeb(query, request.cookies?.[LOGIN_COOKIE])
    if (done.session) {
      reply.setCookie(SESSION_COOKIE, done.session.token, {...cookieBase, path: '/', expires: new Date(done.session.expiresAt)})
    }
    return reply.redirect(done.redirect, 302)
  })

  app.post(
    '/api/v1/auth/cli/token',
    {
      config: {auth: false},
      schema: {
        body: {
          type: 'object',
          required: ['code', 'verifier'],
          additionalProperties: false,
          properties: {code: str(200), verifier: {type: 'string', pattern: VERIFIER.source}},
        },
      },
    },
    async (request, reply) => {
      const {code, verifier} = request.body as {code: string; verifier: string}
      return noStore(reply).send(await signIn.exchangeCliCode(code, verifier))
    },
  )

  app.post('/api/v1/auth/device', {config: {auth: false}, schema: {body: {type: 'object', additionalProperties: false, properties: {}}}}, async (_request, reply) =>
    noStore(reply).send(await signIn.startDevice()),
  )

  app.post(
    '/api/v1/auth/device/token',
    {
      config: {auth: false},
      schema: {body: {type: 'object', required: ['deviceCode'], additionalProperties: false, properties: {deviceCode: str(200)}}},
    },
    async (request, reply) => noStore(reply).send(await signIn.pollDevice((request.body as {deviceCode: string}).deviceCode)),
  )
}
