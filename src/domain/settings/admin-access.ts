import {AppError} from '../../api/app-error.js'
import type {CallContext, CredentialKind} from '../authz/context.js'

/** Credential kinds the admin settings routes accept: an interactive session or the dev credential. */
export const INTERACTIVE_KINDS: ReadonlySet<CredentialKind> = new Set(['session', 'dev'])

export type AdminDecision = {allowed: true} | {allowed: false; code: 'not_system_admin' | 'credential_kind_not_allowed'; reason: string}

/**
 * Settings, maintenance and profiling admin routes: a Hub system admin on an interactive
 * session or the dev credential. User access tokens (bounded to one project), agent, broker and
 * federated credentials are refused even for an admin's token, like the delegation admin routes.
 */
export function decideAdmin(ctx: CallContext): AdminDecision {
  if (ctx.principal.kind !== 'user' || !ctx.principal.systemAdmin) return {allowed: false, code: 'not_system_admin', reason: 'the caller is not a Hub system admin'}
  if (!INTERACTIVE_KINDS.has(ctx.credentialKind)) return {allowed: false, code: 'credential_kind_not_allowed', reason: `a ${ctx.credentialKind} credential cannot use the admin routes; sign in interactively`}
  return {allowed: true}
}

export function requireAdmin(ctx: CallContext): void {
  const d = decideAdmin(ctx)
  if (!d.allowed) throw new AppError(d.code, d.reason, {credentialKind: ctx.credentialKind})
}

/** Admin UI tabs and routes the caller may use (GET /api/v1/admin/status `permissions`). */
export function adminPermissions(ctx: CallContext): string[] {
  if (!decideAdmin(ctx).allowed) return []
  return [
    'admin.status.read',
    'admin.server_config.read',
    'admin.server_config.write',
    'admin.maintenance.read',
    'admin.maintenance.write',
    'admin.profiling.read',
    'admin.profiling.write',
    'admin.templates.manage',
    'admin.users.manage',
    'admin.delegation_adoption',
  ]
}
