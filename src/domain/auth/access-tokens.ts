import {AppError, notFound} from '../../api/app-error.js'
import type {AccessTokenDto} from '../../api/dto.js'
import type {AccessToken} from '../../store/repositories/credentials.js'
import type {CallContext} from '../authz/context.js'
import {isPermission} from '../authz/permissions.js'
import {iso} from '../shared/clock.js'
import {hashSecret, newId, newSecret, TOKEN_PREFIX} from '../shared/secrets.js'
import type {Deps} from '../deps.js'

export const DEFAULT_TOKEN_TTL_DAYS = 90
export const MAX_TOKEN_TTL_DAYS = 366

export interface CreateTokenInput {
  name: string
  projectId: string
  permissions: string[]
  expiresAt?: string
}

export type TokenView = AccessTokenDto

/** User access tokens: bounded to one project and a set of permissions, stored hashed, expiring. */
export function createAccessTokens(deps: Deps) {
  const {store, clock} = deps

  const view = (t: AccessToken): TokenView => {
    const {userId: _u, ...rest} = t
    const status = t.revokedAt ? 'revoked' : t.expiresAt && t.expiresAt <= iso(clock.now()) ? 'expired' : 'active'
    return {...rest, status}
  }

  function requireInteractiveUser(ctx: CallContext) {
    if (ctx.principal.kind !== 'user') throw new AppError('forbidden', 'only users have access tokens')
    if (ctx.credentialKind === 'user_access_token') throw new AppError('forbidden', 'a user access token cannot manage access tokens; sign in')
    return ctx.principal
  }

  return {
    async create(ctx: CallContext, input: CreateTokenInput): Promise<TokenView & {token: string}> {
      const user = requireInteractiveUser(ctx)
      const name = input.name.trim()
      if (!name) throw new AppError('validation_error', 'name must not be empty', {fields: [{path: 'name', message: 'must not be empty'}]})
      const unknown = input.permissions.filter((p) => !isPermission(p))
      if (unknown.length) {
        throw new AppError('validation_error', `unknown permission${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, {fields: [{path: 'permissions', message: 'unknown permission'}], unknown})
      }
      if (input.permissions.length === 0) {
        throw new AppError('validation_error', 'permissions must name at least one permission', {fields: [{path: 'permissions', message: 'must not be empty'}]})
      }
      const project = await store.projects.get(input.projectId)
      const role = project ? await store.projects.roleOf(project.id, user.id) : null
      if (!project || (!role && !user.systemAdmin)) throw notFound('project')

      const now = clock.now()
      let expiresAt: string
      if (input.expiresAt) {
        const t = Date.parse(input.expiresAt)
        if (Number.isNaN(t)) throw new AppError('validation_error', 'expiresAt must be an ISO-8601 time', {fields: [{path: 'expiresAt', message: 'not a time'}]})
        if (t <= now.getTime()) throw new AppError('validation_error', 'expiresAt must be in the future', {fields: [{path: 'expiresAt', message: 'in the past'}]})
        if (t - now.getTime() > MAX_TOKEN_TTL_DAYS * 86_400_000) {
          throw new AppError('validation_error', `expiresAt may be at most ${MAX_TOKEN_TTL_DAYS} days ahead`, {fields: [{path: 'expiresAt', message: 'too far ahead'}]})
        }
        expiresAt = iso(new Date(t))
      } else {
        expiresAt = iso(new Date(now.getTime() + DEFAULT_TOKEN_TTL_DAYS * 86_400_000))
      }
      const token = newSecret(TOKEN_PREFIX.userAccessToken)
      const record: AccessToken = {
        id: newId(),
        userId: user.id,
        name,
        projectId: project.id,
        permissions: [...new Set(input.permissions)].sort(),
        prefix: token.slice(0, TOKEN_PREFIX.userAccessToken.length + 6),
        createdAt: iso(now),
        expiresAt,
        lastUsedAt: null,
        revokedAt: null,
      }
      await store.credentials.insertToken({...record, tokenHash: hashSecret(token)})
      deps.logger.info({tokenId: record.id, userId: user.id, projectId: project.id}, 'user access token created')
      return {...view(record), token}
    },

    async list(ctx: CallContext): Promise<TokenView[]> {
      // A token must not see its siblings: listing needs an interactive credential too.
      requireInteractiveUser(ctx)
      return (await store.credentials.listTokens(ctx.principal.id)).map(view)
    },

    /** Revokes one of the caller's tokens (a system admin may revoke anyone's). Idempotent. */
    async revoke(ctx: CallContext, id: string): Promise<TokenView> {
      const user = requireInteractiveUser(ctx)
      const t = await store.credentials.getToken(id)
      if (!t || (t.userId !== user.id && !user.systemAdmin)) throw notFound('access token')
      await store.credentials.revokeToken(id, iso(clock.now()))
      return view((await store.credentials.getToken(id))!)
    },
  }
}

export type AccessTokens = ReturnType<typeof createAccessTokens>
