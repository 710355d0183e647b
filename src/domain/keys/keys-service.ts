import {randomBytes} from 'node:crypto'
import {AppError, notFound} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {CallContext} from '../authz/context.js'
import {decideProject} from '../authz/decide.js'
import type {ProjectRole} from '../authz/permissions.js'
import {ownsAgent, type AgentAccess} from '../agents/access.js'
import {requireAttachReach} from '../agents/attach-reach.js'
import {SCOPE} from '../agents/scopes.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import type {Deps} from '../deps.js'

export const MAX_KEYS_CHARS = 8192

/**
 * The keys operation: literal keystrokes to a running agent's terminal, delivered once (no
 * retry, no queue). Authorized like attach, not by message mode or message permission. Leaves a
 * content-free audit record and nothing else (no message, conversation, event or notification).
 */
export function createKeysService(deps: Deps, k: {access: AgentAccess; gateway: BrokerGateway}) {
  const {store, clock} = deps

  async function projectIdOf(ref: string): Promise<string | null> {
    return ((await store.projects.get(ref)) ?? (await store.projects.getBySlug(ref)))?.id ?? null
  }

  const denied = (why: string) => new AppError('keys_denied', `not allowed to send keys: ${why}`)
  const hasLifecycle = (ctx: CallContext) => ctx.scopes?.has(SCOPE.lifecycle) === true

  /**
   * An agent's live attach authority: the target is itself or one of its descendants (any other
   * agent answers 404, as if it did not exist), then `agent.attach` along its delegation chain.
   */
  async function attachAuthority(ctx: CallContext, agent: AgentRecord): Promise<AgentRecord> {
    await requireAttachReach(store, ctx, agent, 'keys')
    await k.access.walk.require(ctx, 'agent.attach', {code: 'keys_denied', message: 'not allowed to send keys: the agent holds no live attach authority'})
    return agent
  }

  /** Target lookup and authorization, in the order the spec fixes for each route and caller. */
  async function authorize(ctx: CallContext, target: {ref: string; projectRef?: string}): Promise<AgentRecord> {
    const p = ctx.principal
    if (p.kind === 'broker') throw denied('brokers do not send keys')
    if (p.kind === 'agent') {
      if (target.projectRef !== undefined) {
        // Project-scoped route: decided on the project alone, before scope or target.
        const pid = target.projectRef === p.projectId ? p.projectId : await projectIdOf(target.projectRef)
        if (pid !== p.projectId) throw new AppError('cross_project_keys_unsupported', 'agents may send keys only to agents of their own project')
        if (!hasLifecycle(ctx)) throw denied(`the agent's token lacks ${SCOPE.lifecycle}`)
        const agent = await k.access.resolve(target.ref, p.projectId)
        if (!agent) throw notFound('agent')
        return attachAuthority(ctx, agent)
      }
      // Top-level route: the scope first, then the target, then the project comparison.
      if (!hasLifecycle(ctx)) throw denied(`the agent's token lacks ${SCOPE.lifecycle}`)
      const agent = await k.access.resolve(target.ref)
      if (!agent) throw notFound('agent')
      if (agent.projectId !== p.projectId) throw new AppError('cross_project_keys_unsupported', 'agents may send keys only to agents of their own project')
      return attachAuthority(ctx, agent)
    }
    // A human: the target's creator, or a holder of agent.attach on it.
    const projectId = target.projectRef !== undefined ? await projectIdOf(target.projectRef) : undefined
    const agent = target.projectRef !== undefined && !projectId ? null : await k.access.resolve(target.ref, projectId ?? undefined)
    if (!agent) throw notFound('agent')
    const role = (await store.projects.roleOf(agent.projectId, p.id)) as ProjectRole | null
    if (!decideProject(ctx, agent.projectId, role, 'project.read').allowed) throw notFound('agent')
    if (!ownsAgent(ctx, agent) && !decideProject(ctx, agent.projectId, role, 'agent.attach').allowed) throw denied('only the agent\'s owner or a holder of agent.attach may send keys')
    return agent
  }

  return {
    async send(ctx: CallContext, target: {ref: string; projectRef?: string}, keys: string): Promise<{operationId: string; delivered: true}> {
      const agent = await authorize(ctx, target)
      if (agent.phase !== 'running' || !agent.runtimeRef) throw new AppError('agent_not_running', `agent ${agent.name} is not running (phase ${agent.phase}); keys never start or queue an agent`)
      if (!agent.brokerId || !k.gateway.isConnected(agent.brokerId)) throw new AppError('keys_unavailable', `the broker of agent ${agent.name} is not connected; nothing was sent`)
      if (!k.gateway.capabilities(agent.brokerId)?.includes('keys')) throw new AppError('keys_unsupported', 'the agent\'s runtime broker has no keys operation; upgrade the broker')
      const operationId = 'op_' + randomBytes(8).toString('hex')
      try {
        await k.gateway.request(agent.brokerId, 'agent.keys', {agentId: agent.id, input: {literal: keys}}, 10_000)
      } catch (err) {
        throw keysFailure(err)
      }
      await store.audit.insert({id: newId(), kind: 'agent_keys', actor: {kind: ctx.principal.kind, id: ctx.principal.id}, projectId: agent.projectId, target: agent.id, details: {operationId, credentialKind: ctx.credentialKind}, at: iso(clock.now())})
      return {operationId, delivered: true}
    },
  }
}

/** Maps a failed dispatch to the keys outcomes: not sent (503), refused (409), or unknown (502/504). */
function keysFailure(err: unknown): AppError {
  if (!(err instanceof AppError)) return new AppError('keys_outcome_unknown', `the keys may have arrived: ${(err as Error)?.message ?? err}`)
  const brokerCode = err.details?.brokerCode
  if (brokerCode === 'terminal_not_ready') return new AppError('terminal_not_ready', 'the agent runs but its terminal is not ready for input')
  if (brokerCode === 'agent_not_found') return new AppError('agent_not_running', 'the agent\'s session is gone')
  if (brokerCode === 'unsupported_method') return new AppError('keys_unsupported', 'the agent\'s runtime broker has no keys operation; upgrade the broker')
  if (err.code === 'broker_unavailable' && err.details?.sent === false) return new AppError('keys_unavailable', 'the broker disconnected before the keys were sent; nothing was sent')
  if (err.code === 'broker_timeout') return new AppError('keys_outcome_unknown', 'the broker did not answer in time: the keys may have arrived; check before sending again', undefined, 504)
  return new AppError('keys_outcome_unknown', `the keys may have arrived (${err.message}); check before sending again`)
}

export type KeysService = ReturnType<typeof createKeysService>
