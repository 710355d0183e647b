import type {FastifyInstance, FastifyReply} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {WebSignIn} from '../../domain/auth/web-sign-in.js'
import {requireAdmin} from '../../domain/settings/admin-access.js'
import {ctxOf, SESSION_COOKIE} from '../plugins/auth.js'
import type {WebAssets} from '../web/assets.js'
import {settingsLayout} from '../web/settings-layout.js'
import {webSignInRoutes} from './web-sign-in.js'

export interface WebRoutesDeps {
  /** One-time sign-in links (`svc web`): the only way a browser gets a session besides OpenID Connect. */
  webSignIn: WebSignIn
  mode: string
  secureCookies: boolean
  /** The built client (loaded on first request; embedded in the bundles). */
  assets: () => Promise<WebAssets>
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
}

// Scripts and styles from the Hub only; Lit's constructable stylesheets need no 'unsafe-inline'.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

function sendAsset(reply: FastifyReply, path: string, body: Buffer) {
  const ext = path.slice(path.lastIndexOf('.'))
  // Vite names built files by content hash: they never change under one name.
  const cache = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'
  return reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin').header('cache-control', cache).type(TYPES[ext] ?? 'application/octet-stream').send(body)
}

/**
 * The Hub's web client: `/` (the app; its views are `#/...` routes) and `/assets/*`, the
 * one-time sign-in links of `svc web`, and the settings form layout. See docs/web.md.
 */
export function webRoutes(deps: WebRoutesDeps) {
  let loaded: Promise<WebAssets> | null = null
  const assets = () => (loaded ??= deps.assets())
  return async (app: FastifyInstance) => {
    const serve = async (path: string, reply: FastifyReply) => {
      const body = (await assets()).get(path)
      if (!body) throw new AppError('not_found', path === '/index.html' ? 'the web client is not built: run npm run build' : 'no such file')
      return sendAsset(reply, path, body)
    }
    app.get('/', {config: {auth: false}}, (_request, reply) => serve('/index.html', reply))
    app.get('/assets/*', {config: {auth: false}}, (request, reply) => serve(`/assets/${(request.params as {'*': string})['*']}`, reply))

    // The browser signs in through a one-time link of `svc web` (web-sign-in.ts): no request
    // is trusted for coming from loopback, since an agent shares the host's network.
    await webSignInRoutes(app, {webSignIn: deps.webSignIn, secureCookies: deps.secureCookies})

    app.get('/api/v1/admin/server-config/layout', async (request) => {
      requireAdmin(ctxOf(request))
      return {fields: settingsLayout(deps.mode)}
    })

    // A WebSocket upgrade is a GET, so the cookie check for state-changing requests does not
    // cover it: a page of another origin on this host (same site) could open an agent's
    // terminal with the user's cookie. Upgrades carrying the cookie must come from the Hub's page.
    app.addHook('onRequest', async (request) => {
      if ((request.headers.upgrade ?? '').toLowerCase() !== 'websocket') return
      if (request.headers.authorization || !request.cookies?.[SESSION_COOKIE]) return
      const origin = request.headers.origin
      let ok = false
      try {
        ok = !!origin && new URL(origin).host === request.headers.host
      } catch {
        ok = false
      }
      if (!ok) throw new AppError('forbidden', 'cross-origin WebSocket refused: open it from the Hub\'s own pages')
    })
  }
}
