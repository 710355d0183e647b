import {AppError} from '../../api/app-error.js'
import type {ErrorCode} from '../../api/error-codes.js'
import type {CallContext} from '../authz/context.js'
import type {Deps} from '../deps.js'
import {decideWalk, loadChain, type WalkDecision} from './walk.js'

/**
 * The walk as the services use it. Only agent principals walk; users and brokers are decided
 * by their own rules. Stateless: every call reads the chain again (no cache to invalidate).
 */
export function createWalkGuard(deps: Pick<Deps, 'store' | 'logger'>) {
  const {store, logger} = deps

  async function decide(ctx: CallContext, permission: string): Promise<WalkDecision> {
    const p = ctx.principal
    if (p.kind !== 'agent') return {allowed: true, reason: 'not_an_agent'}
    const d = decideWalk(await loadChain(store, p.id), permission)
    // SPEC Events 6: the delegate of the unrecorded hop, in the server log only.
    if (d.unrecordedDelegates) logger.debug({agentId: p.id, permission, unrecordedDelegates: d.unrecordedDelegates}, 'delegation walk denied: unrecorded hop')
    return d
  }

  return {
    decide,
    /**
     * Throws unless the calling agent's chain carries `permission`. The message is the caller's
     * usual one; `details` carries the permission, the walk's reason and, for an unrecorded
     * hop, the spec's remediation keys (never an edge or ancestor ID).
     */
    async require(ctx: CallContext, permission: string, opts: {message?: string; code?: ErrorCode} = {}): Promise<void> {
      const d = await decide(ctx, permission)
      if (!d.allowed) throw walkDenied(d, permission, opts)
    },

    /**
     * Compatibility policy V1 rules 1 and 6: an agent whose new child gets an assign-mode
     * service account (from the request, the project default or the hub default) needs
     * `cloud_service_account.assign` along its own chain. When an unrecorded hop is the cause,
     * the message asks an authorized user to reincarnate or recreate the agent, and the details
     * name the admin adoption route as the alternative.
     */
    async requireServiceAccountAssign(ctx: CallContext): Promise<void> {
      const permission = 'cloud_service_account.assign'
      const d = await decide(ctx, permission)
      if (d.allowed) return
      const message = d.details
        ? `not allowed: ${permission}: this agent's delegation is unrecorded, so it cannot give a new agent an assign-mode service account; ask an authorized user to reincarnate or recreate this agent (svc agent reincarnate), or a system admin to adopt its delegation`
        : `not allowed: ${permission} on project`
      throw walkDenied(d, permission, {message})
    },
  }
}

export function walkDenied(d: WalkDecision, permission: string, opts: {message?: string; code?: ErrorCode} = {}): AppError {
  return new AppError(opts.code ?? 'forbidden', opts.message ?? `not allowed: ${permission}`, {permission, reason: d.reason, ...d.details})
}

export type WalkGuard = ReturnType<typeof createWalkGuard>
