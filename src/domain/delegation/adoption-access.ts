import {AppError} from '../../api/app-error.js'
import type {CallContext} from '../authz/context.js'
import {INTERACTIVE_KINDS} from '../settings/admin-access.js'
import type {Repos} from '../../store/store.js'

/**
 * Delegation adoption admin routes (SPEC "Authentication" 3): a Hub system admin on an
 * interactive session or the dev credential. The credential kind is checked first, so an agent,
 * broker, federated or user access token is refused as a kind (`credential_kind_not_allowed`)
 * whoever stands behind it; a session of a non-admin is `not_system_admin`. No permission is
 * registered for these routes, so nothing can delegate them.
 */
export function requireAdoptionAdmin(ctx: CallContext): void {
  if (!INTERACTIVE_KINDS.has(ctx.credentialKind)) {
    throw new AppError('credential_kind_not_allowed', `a ${ctx.credentialKind} credential cannot use the delegation adoption routes; sign in interactively`, {credentialKind: ctx.credentialKind})
  }
  if (ctx.principal.kind !== 'user' || !ctx.principal.systemAdmin) throw new AppError('not_system_admin', 'the delegation adoption routes need a Hub system admin')
}

/**
 * The commit's re-check inside its transaction: the caller's user row must still be an active
 * system admin. The request's principal was read when the request was authenticated, so a
 * revocation or suspension since then is seen here (403 `mutation_permission_lost`).
 */
export async function recheckAdoptionAdmin(tx: Repos, ctx: CallContext): Promise<void> {
  const u = await tx.users.get(ctx.principal.id)
  if (!u || u.status !== 'active' || !u.systemAdmin) {
    throw new AppError('mutation_permission_lost', 'the caller is no longer an active Hub system admin; nothing was written')
  }
}
