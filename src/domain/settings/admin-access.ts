import {AppError} from '../../api/app-error.js'
import type {CallContext, CredentialKind} from '../authz/context.js'
import {permissionsOf, type AdminPermission} from '../authz/hub-roles.js'

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

/**
 * Admin UI tabs and routes the caller may use (GET /api/v1/admin/status `permissions`): every
 * admin permission for a system admin, plus those of the user's Hub role (authz/hub-roles.ts).
 * Only interactive credentials hold any, by the same rule as `decideAdmin`: a user access token
 * or any other credential kind holds none, even a system admin's.
 */
export function adminPermissions(ctx: CallContext): AdminPermission[] {
  if (ctx.principal.kind !== 'user' || !INTERACTIVE_KINDS.has(ctx.credentialKind)) return []
  return permissionsOf({systemAdmin: ctx.principal.systemAdmin, hubRole: ctx.principal.hubRole ?? null})
}

/** Whether the caller holds one admin permission (see `adminPermissions`). */
export const hasAdminPermission = (ctx: CallContext, permission: AdminPermission): boolean => adminPermissions(ctx).includes(permission)
