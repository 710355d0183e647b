import {AppError, notFound} from '../../api/app-error.js'
import type {User, UserStatus} from '../../store/repositories/users.js'
import type {CallContext} from '../authz/context.js'
import {HUB_ROLE_NAMES, isHubRole, type HubRole} from '../authz/hub-roles.js'
import {DEV_USER} from '../hub-config.js'
import {newId} from '../shared/secrets.js'
import {iso} from '../shared/clock.js'
import type {Deps} from '../deps.js'

export interface OidcIdentity {
  issuer: string
  subject: string
  email: string
  name?: string
}

export function createUsersService(deps: Deps) {
  const {store, clock, config} = deps
  const now = () => iso(clock.now())
  const isAdminEmail = (email: string) => config.adminEmails.some((e) => e.toLowerCase() === email.toLowerCase())

  function requireAdmin(ctx: CallContext) {
    if (ctx.principal.kind !== 'user' || !ctx.principal.systemAdmin || ctx.bounds) {
      throw new AppError('forbidden', 'only a system admin may manage users')
    }
  }

  return {
    /** The dev user exists whenever dev mode is on; it is a system admin. */
    async ensureDevUser(): Promise<User> {
      const promoted = async (u: User) => (u.systemAdmin ? u : (await store.users.update(u.id, {systemAdmin: true}, now()))!)
      const existing = await store.users.get(DEV_USER.id)
      if (existing) return promoted(existing)
      try {
        return await store.users.insert({id: DEV_USER.id, email: DEV_USER.email, displayName: DEV_USER.displayName, systemAdmin: true, now: now()})
      } catch (err) {
        // Replicas starting at the same moment on one database: another inserted it first.
        const winner = err instanceof AppError && err.code === 'conflict' ? await store.users.get(DEV_USER.id) : null
        if (!winner) throw err
        return promoted(winner)
      }
    },

    /** Boot-time admin bootstrap from `server.hub.admin_emails`; never demotes anyone. */
    async promoteConfiguredAdmins(): Promise<number> {
      return store.users.promoteAdmins(config.adminEmails, now())
    },

    /**
     * The user behind an OpenID identity: found by issuer and subject, else linked by e-mail,
     * else created. `server.auth.user_access_mode: domains` limits who may sign in.
     */
    async signInFromOidc(id: OidcIdentity): Promise<User> {
      const email = id.email.toLowerCase()
      if (config.userAccessMode === 'domains') {
        const domain = email.split('@')[1] ?? ''
        if (!config.authorizedDomains.map((d) => d.toLowerCase()).includes(domain)) {
          throw new AppError('forbidden', `sign-in is limited to authorized domains; ${domain || 'this address'} is not one`)
        }
      }
      const t = now()
      let user = (await store.users.getByOidc(id.issuer, id.subject)) ?? (await store.users.getByEmail(email))
      if (!user) {
        try {
          user = await store.users.insert({id: newId(), email, displayName: id.name || email, systemAdmin: isAdminEmail(email), oidcIssuer: id.issuer, oidcSubject: id.subject, now: t})
        } catch (err) {
          // Two first sign-ins raced: the other one created the user.
          if (!(err instanceof AppError && err.code === 'conflict')) throw err
          user = (await store.users.getByEmail(email))!
        }
      }
      if (user.status !== 'active') throw new AppError('user_suspended', 'this user is suspended')
      return (await store.users.update(user.id, {lastLoginAt: t, oidcIssuer: id.issuer, oidcSubject: id.subject, ...(isAdminEmail(email) && {systemAdmin: true})}, t))!
    },

    async list(ctx: CallContext): Promise<User[]> {
      requireAdmin(ctx)
      return store.users.list()
    },

    async get(ctx: CallContext, id: string): Promise<User> {
      const self = ctx.principal.kind === 'user' && ctx.principal.id === id
      if (!self) requireAdmin(ctx)
      const user = await store.users.get(id)
      if (!user) throw notFound('user')
      return user
    },

    /** Suspends or reactivates a user, grants or removes system admin, sets or clears its Hub role. */
    async update(ctx: CallContext, id: string, patch: {status?: UserStatus; systemAdmin?: boolean; hubRole?: HubRole | null}): Promise<User> {
      requireAdmin(ctx)
      // The route's schema checks it too; the domain refuses a role it does not define for any caller.
      if (patch.hubRole !== undefined && patch.hubRole !== null && !isHubRole(patch.hubRole)) {
        throw new AppError('validation_error', `hubRole must be one of ${HUB_ROLE_NAMES.join(', ')} or null`, {fields: [{path: 'hubRole', message: 'unknown Hub role'}]})
      }
      if (ctx.principal.kind === 'user' && ctx.principal.id === id && (patch.status === 'suspended' || patch.systemAdmin === false)) {
        throw new AppError('conflict', 'an admin cannot suspend or demote themselves')
      }
      const user = await store.users.update(id, patch, now())
      if (!user) throw notFound('user')
      deps.logger.info({userId: id, patch, by: ctx.principal.id}, 'user updated')
      return user
    },
  }
}

export type UsersService = ReturnType<typeof createUsersService>
