import {AppError} from '../../api/app-error.js'
import type {User} from '../../store/repositories/users.js'
import type {CallContext, UserPrincipal} from '../authz/context.js'
import {isPermission, type Permission} from '../authz/permissions.js'
import {iso} from '../shared/clock.js'
import {hashSecret, safeEqual, TOKEN_PREFIX} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import {DEV_USER} from '../hub-config.js'

export type Authenticated = Omit<CallContext, 'requestId'>

const unauthorized = (message = 'missing or invalid credential') => new AppError('unauthorized', message)

export const userPrincipal = (u: User): UserPrincipal => ({kind: 'user', id: u.id, email: u.email, displayName: u.displayName, systemAdmin: u.systemAdmin, hubRole: u.hubRole})

// last_used_at is written at most this often per token, so reads stay reads.
const TOUCH_INTERVAL_MS = 60_000

/**
 * Resolves a bearer secret to a principal and exactly one credential kind. The kind comes from
 * the credential (its prefix and the table it is found in), never from anything the client says.
 * Other credential kinds (agent, broker) register resolvers through `extraResolvers`.
 */
export function createCredentialResolver(deps: Deps, extraResolvers: Array<(secret: string) => Promise<Authenticated | null>> = []) {
  const {store, clock, config} = deps

  async function activeUser(id: string): Promise<User> {
    const user = await store.users.get(id)
    if (!user) throw unauthorized()
    if (user.status !== 'active') throw new AppError('user_suspended', 'this user is suspended')
    return user
  }

  return async function authenticate(secret: string | undefined | null): Promise<Authenticated> {
    if (!secret) throw unauthorized()
    const now = clock.now()

    if (secret.startsWith(TOKEN_PREFIX.dev)) {
      if (!config.devMode || !config.devToken || !safeEqual(secret, config.devToken)) throw unauthorized()
      return {principal: userPrincipal(await activeUser(DEV_USER.id)), credentialKind: 'dev'}
    }

    if (secret.startsWith(TOKEN_PREFIX.session)) {
      const s = await store.credentials.sessionByHash(hashSecret(secret))
      if (!s || s.revokedAt || s.expiresAt <= iso(now)) throw unauthorized('session expired or signed out; sign in again')
      return {principal: userPrincipal(await activeUser(s.userId)), credentialKind: 'session'}
    }

    if (secret.startsWith(TOKEN_PREFIX.userAccessToken)) {
      const t = await store.credentials.tokenByHash(hashSecret(secret))
      if (!t || t.revokedAt) throw unauthorized('user access token revoked or unknown')
      if (t.expiresAt && t.expiresAt <= iso(now)) throw unauthorized('user access token expired')
      const user = await activeUser(t.userId)
      if (!t.lastUsedAt || now.getTime() - Date.parse(t.lastUsedAt) > TOUCH_INTERVAL_MS) {
        await store.credentials.touchToken(t.id, iso(now))
      }
      const permissions = new Set(t.permissions.filter(isPermission) as Permission[])
      return {principal: userPrincipal(user), credentialKind: 'user_access_token', bounds: {tokenId: t.id, projectId: t.projectId, permissions}}
    }

    for (const resolve of extraResolvers) {
      const found = await resolve(secret)
      if (found) return found
    }
    throw unauthorized()
  }
}

export type Authenticate = ReturnType<typeof createCredentialResolver>
