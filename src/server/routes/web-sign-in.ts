import type {FastifyInstance} from 'fastify'
import {AppError} from '../../api/app-error.js'
import {WEB_LINK_PATH, type WebSignIn} from '../../domain/auth/web-sign-in.js'
import {ctxOf, SESSION_COOKIE} from '../plugins/auth.js'
import {escapeHtml} from './artifact-page-template.js'

const failurePage = (status: number, message: string, requestId: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed</title></head><body><h1>Sign-in failed</h1><p>${escapeHtml(message)}</p><p>Request ${escapeHtml(requestId)} (status ${status}).</p></body></html>\n`

/**
 * `POST /api/v1/auth/web-sign-in` makes a one-time link for the caller's browser (`svc web`);
 * `GET /auth/web?token=...` spends it: the `svc_session` cookie, then the page the link names.
 */
export async function webSignInRoutes(app: FastifyInstance, deps: {webSignIn: WebSignIn; secureCookies: boolean}) {
  app.post(
    '/api/v1/auth/web-sign-in',
    {schema: {body: {type: 'object', additionalProperties: false, properties: {path: {type: 'string', maxLength: 2048}}}}},
    async (request, reply) => {
      const link = await deps.webSignIn.create(ctxOf(request), (request.body ?? {}) as {path?: string})
      return reply.code(201).header('cache-control', 'no-store').send(link)
    },
  )

  // No HEAD twin: a link previewer's HEAD must not spend the link.
  app.get(WEB_LINK_PATH, {config: {auth: false}, exposeHeadRoute: false}, async (request, reply) => {
    const {token} = request.query as {token?: string}
    // The answer holds a session or a spent link: never cached, and the link is not passed on as a referrer.
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
    try {
      const done = await deps.webSignIn.redeem(typeof token === 'string' ? token : undefined)
      reply.setCookie(SESSION_COOKIE, done.session.token, {httpOnly: true, sameSite: 'strict', secure: deps.secureCookies, path: '/', expires: new Date(done.session.expiresAt)})
      return reply.redirect(done.next, 303)
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      return reply
        .code(err.status)
        .header('content-security-policy', "default-src 'none'")
        .type('text/html; charset=utf-8')
        .send(failurePage(err.status, err.message, request.id))
    }
  })
}
