import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'
import {AppError} from '../../api/app-error.js'
import type {Sessions} from '../../domain/auth/sessions.js'
import {DEV_USER} from '../../domain/hub-config.js'
import {requireAdmin} from '../../domain/settings/admin-access.js'
import {ctxOf, SESSION_COOKIE} from '../plugins/auth.js'
import type {WebAssets} from '../web/assets.js'
import {settingsLayout} from '../web/settings-layout.js'
import {loopbackPeerUid} from '../web/peer-owner.js'

export interface WebRoutesDeps {
  sessions: Sessions
  /** Workstation Hub with dev auth: the loopback browser may be signed in as the dev user. */
  devSignIn: boolean
  mode: string
  secureCookies: boolean
  /** The built client (loaded on first request; embedded in the bundles). */
  assets: () => Promise<WebAssets>
  /** Owner of a loopback client socket (tests stand in another account); default: the kernel's tables. */
  peerUid?: PeerUid
}

type PeerUid = (clientPort: number, serverPort: number) => Promise<number | null>

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

const LOOPBACK_ADDR = (addr: string) => addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.')
const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/i

function sameOriginRequest(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined) return site === 'same-origin'
  const origin = request.headers.origin
  if (!origin) return false
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

/**
 * Dev sign-in is answered only when all hold: the Hub signs in the dev user at all (workstation,
 * dev auth); the peer is on this host; the Host header is a loopback name (a DNS-rebinding page
 * under another name is refused); the request comes from the Hub's own page (Sec-Fetch-Site
 * or Origin), so another site cannot plant the cookie; and, where the kernel says (Linux), the
 * client's socket belongs to the OS user running the Hub.
 */
async function checkDevSignIn(request: FastifyRequest, enabled: boolean, peerUid: PeerUid) {
  if (!enabled) throw new AppError('not_found', 'dev sign-in is offered by workstation Hubs with dev auth only')
  if (!LOOPBACK_ADDR(request.socket.remoteAddress ?? '')) throw new AppError('not_loopback', 'dev sign-in answers only browsers on the Hub\'s own host')
  if (!LOOPBACK_HOST.test(request.headers.host ?? '')) throw new AppError('forbidden', 'dev sign-in answers only at a loopback address (127.0.0.1, localhost, [::1])')
  if (!sameOriginRequest(request)) throw new AppError('forbidden', 'cross-site request refused: dev sign-in is started from the Hub\'s own page')
  // Another account on this machine may not read the dev credential (mode 0600), so it may not
  // get the dev session either: the client's socket must belong to the Hub's own OS user.
  const uid = await peerUid(request.socket.remotePort ?? 0, request.socket.localPort ?? 0)
  if (uid !== null && typeof process.getuid === 'function' && uid !== process.getuid()) {
    throw new AppError('forbidden', 'dev sign-in answers only the OS user that runs the Hub', {peerUid: uid})
  }
}

function sendAsset(reply: FastifyReply, path: string, body: Buffer) {
  const ext = path.slice(path.lastIndexOf('.'))
  // Vite names built files by content hash: they never change under one name.
  const cache = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'
  return reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin').header('cache-control', cache).type(TYPES[ext] ?? 'application/octet-stream').send(body)
}

/**
 * The Hub's web client: `/` (the app; its views are `#/...` routes) and `/assets/*`, the dev
 * sign-in of workstation Hubs, and the settings form layout. See docs/web.md.
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

    app.get('/api/v1/auth/dev-session', {config: {auth: false}}, async () => ({available: deps.devSignIn}))
    app.post('/api/v1/auth/dev-session', {config: {auth: false}}, async (request, reply) => {
      await checkDevSignIn(request, deps.devSignIn, deps.peerUid ?? loopbackPeerUid)
      const session = await deps.sessions.create(DEV_USER.id, 'web')
      reply.header('cache-control', 'no-store').setCookie(SESSION_COOKIE, session.token, {httpOnly: true, sameSite: 'strict', secure: deps.secureCookies, path: '/', expires: new Date(session.expiresAt)})
      return {user: {id: DEV_USER.id, displayName: DEV_USER.displayName}, expiresAt: session.expiresAt}
    })

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
