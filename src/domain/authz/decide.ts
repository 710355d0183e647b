import {AppError} from '../../api/app-error.js'
import type {CallContext} from './context.js'
import {ROLE_PERMISSIONS, type Permission, type ProjectRole} from './permissions.js'

export interface Decision {
  allowed: boolean
  reason: string
  details?: Record<string, unknown>
}

/**
 * Pure decision: may the caller use `permission` in a project where its membership role is
 * `role` (null: not a member)? System admins hold every permission; a user access token bounds
 * the user to its project and its permissions, whatever the user could otherwise do.
 */
export function decideProject(ctx: CallContext, projectId: string, role: ProjectRole | null, permission: Permission): Decision {
  const p = ctx.principal
  if (p.kind !== 'user') return {allowed: false, reason: 'principal_not_user'}
  if (ctx.bounds) {
    if (ctx.bounds.projectId !== projectId) return {allowed: false, reason: 'token_project_mismatch'}
    if (!ctx.bounds.permissions.has(permission)) return {allowed: false, reason: 'token_lacks_permission'}
  }
  if (p.systemAdmin) return {allowed: true, reason: 'system_admin'}
  if (!role) return {allowed: false, reason: 'not_a_member'}
  if (!ROLE_PERMISSIONS[role].has(permission)) return {allowed: false, reason: 'role_lacks_permission', details: {role}}
  return {allowed: true, reason: 'role', details: {role}}
}

/**
 * Enforces a decision. A caller who may not even read the resource gets 404, as if it did not
 * exist; a caller who may read it but not do this gets 403.
 */
export function enforce(decision: Decision, opts: {canSee: boolean; what: string; permission: string}): void {
  if (decision.allowed) return
  if (!opts.canSee) throw new AppError('not_found', `${opts.what} not found`)
  throw new AppError('forbidden', `not allowed: ${opts.permission} on ${opts.what}`, {permission: opts.permission, reason: decision.reason})
}
