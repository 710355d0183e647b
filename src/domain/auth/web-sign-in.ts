import {AppError} from '../../api/app-error.js'
import type {CallContext} from '../authz/context.js'
import type {Deps} from '../deps.js'
import {loginFlowStore} from './login-flow-store.js'
import type {Sessions} from './sessions.js'
import {returnToOf} from './sign-in-input.js'

/** How long a sign-in link of `svc web` may wait to be opened. */
export const WEB_LINK_TTL_MS = 60_000

/** The page that redeems a link (GET, no credential); see docs/web.md. */
export const WEB_LINK_PATH = '/auth/web'

interface WebLink {
  userId: string
  next: string
}

// Said for every link that cannot be used, so a guesser learns nothing about which links exist.
const linkRefused = () => new AppError('unauthorized', 'this sign-in link is unknown, expired or was already used: run `svc web` again for a new one')

/**
 * One-time sign-in links for the browser (`svc web`). Nothing is trusted for coming from
 * loopback, since an agent shares the host's network: a browser is signed in only by a link that
 * a person's own credential asked for. A link is a random handle kept hashed in the database
 * (the `login_flows` table, so any replica redeems it), valid for a minute and spent by its
 * first use; the page it lands on is fixed when it is made, and only a path on this Hub.
 */
export function createWebSignIn(deps: Deps, sessions: Sessions) {
  const flows = loginFlowStore(deps)
  return {
    /**
     * A link for the caller. Only a person's interactive credential may ask: the dev credential or
     * a session. An agent or a broker may not (that is the whole point), and a user access token
     * may not either: it is bounded to one project, while a web session is not.
     */
    async create(ctx: CallContext, input: {path?: string}): Promise<{path: string; url: string; expiresAt: string}> {
      if (ctx.principal.kind !== 'user' || (ctx.credentialKind !== 'dev' && ctx.credentialKind !== 'session')) {
        throw new AppError('forbidden', 'a sign-in link is made only for a person signed in with the dev credential or a session (svc auth login); agents, brokers and access tokens may not ask')
      }
      const next = nextOf(input.path, deps.config.publicUrl)
      const {handle, expiresAt} = await flows.create('web_link', {userId: ctx.principal.id, next} satisfies WebLink, WEB_LINK_TTL_MS)
      const path = `${WEB_LINK_PATH}?token=${encodeURIComponent(handle)}`
      return {path, url: `${deps.config.publicUrl.replace(/\/+$/, '')}${path}`, expiresAt}
    },

    /** Spends a link: the new web session and where to send the browser. 401 for any link that cannot be used. */
    async redeem(token: string | undefined): Promise<{session: {token: string; expiresAt: string}; next: string}> {
      if (!token) throw linkRefused()
      const flow = await flows.find<WebLink>('web_link', token)
      if (!flow) throw linkRefused()
      try {
        flows.check(flow)
        // Atomic: of two browsers opening the same link at once, one wins.
        await flows.consume(flow)
      } catch {
        throw linkRefused()
      }
      const session = await sessions.create(flow.data.userId, 'web')
      deps.logger.info({userId: flow.data.userId, via: 'web_link'}, 'signed in')
      return {session, next: flow.data.next}
    },
  }
}

/**
 * The page to open after sign-in: a path on this Hub (`/`, `/#/agents/<id>`,
 * `/projects/<p>/artifacts/<a>`); a bare view name like `agents/<id>` means `/#/agents/<id>`.
 * Anything that leaves the Hub (`https://...`, `//host`, a backslash) is refused: a link must
 * not become an open redirect that carries a fresh session's browser elsewhere.
 */
export function nextOf(raw: string | undefined, publicUrl: string): string {
  if (raw === undefined || raw === '' || raw === '/') return '/'
  const candidate = raw.startsWith('/') || raw.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(raw) || raw.startsWith('\\') ? raw : `/#/${raw}`
  try {
    return returnToOf(candidate.startsWith('#') ? `/${candidate}` : candidate, publicUrl)
  } catch {
    throw new AppError('validation_error', 'invalid request: path must be a page of this Hub, like /#/agents or agents/<id>', {fields: [{path: 'body.path', message: 'must be a path on this Hub'}]})
  }
}

export type WebSignIn = ReturnType<typeof createWebSignIn>
