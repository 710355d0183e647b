import {AppError, notFound} from '../../api/app-error.js'
import type {AgentDiffDto as AgentDiff, AgentWorkspace, MergeResultDto, PushResultDto} from '../../api/dto.js'
import {ERROR_CODES, type ErrorCode} from '../../api/error-codes.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {CallContext} from '../authz/context.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import {ownsAgent, type AgentAccess} from './access.js'

export type {AgentDiffDto as AgentDiff, MergeResultDto, PushResultDto} from '../../api/dto.js'

/** Default and largest patch a diff answers (the tunnel carries it as one JSON frame). */
export const DIFF_DEFAULT_BYTES = 1024 * 1024
export const DIFF_MAX_BYTES = 8 * 1024 * 1024

/**
 * Reviewing and landing an agent's work: its diff, merging its branch into the checkout, pushing
 * it. The git work runs on the agent's broker (where its worktree is), through the tunnel; this
 * service decides who may, finds the broker, turns the broker's refusals into catalogue errors,
 * and audits every merge and push.
 */
export function createReviewService(deps: Deps, r: {access: AgentAccess; gateway: BrokerGateway}) {
  const {store, clock} = deps

  async function load(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentRecord> {
    let projectId: string | undefined
    if (projectRef) {
      const p = (await store.projects.get(projectRef)) ?? (await store.projects.getBySlug(projectRef))
      if (!p) throw notFound('project')
      projectId = p.id
    }
    const agent = await r.access.resolve(ref, projectId)
    if (!agent) throw notFound('agent')
    // Reading the agent is enough to see its diff; anyone who cannot read it sees a 404.
    await r.access.checkAgent(ctx, agent, 'agent.read')
    return agent
  }

  /**
   * Landing work is a person's decision: agents never merge or push (their own work or another's);
   * a user who owns the agent may, and so may a user holding `agent.lifecycle` in its project.
   */
  async function mayLand(ctx: CallContext, agent: AgentRecord): Promise<void> {
    if (ctx.principal.kind !== 'user') throw new AppError('forbidden', 'only a person can merge or push an agent\'s work; agents never land work')
    if (ownsAgent(ctx, agent)) return
    await r.access.checkAgent(ctx, agent, 'agent.lifecycle')
  }

  function workspaceOf(agent: AgentRecord): AgentWorkspace {
    if (!agent.workspace) throw new AppError('no_workspace', `agent ${agent.name} has no git workspace (its project has no checkout or repository)`)
    return agent.workspace
  }

  async function callBroker<T>(agent: AgentRecord, method: string, params: Record<string, unknown>, timeoutMs: number): Promise<T> {
    if (!agent.brokerId || !r.gateway.isConnected(agent.brokerId)) throw new AppError('broker_unavailable', `the broker holding agent ${agent.name}'s workspace is not connected`)
    const project = await store.projects.get(agent.projectId)
    const res = await r.gateway.request<T | {refused: {code: string; message: string; details?: Record<string, unknown>}}>(
      agent.brokerId,
      method,
      {agentId: agent.id, workspace: workspaceOf(agent), checkout: project?.localPath ?? null, ...params},
      timeoutMs,
    )
    const refused = (res as {refused?: {code: string; message: string; details?: Record<string, unknown>}}).refused
    if (refused) {
      // A code this Hub does not know (a newer broker) is still reported, as the broker's error.
      if (refused.code in ERROR_CODES) throw new AppError(refused.code as ErrorCode, refused.message, refused.details)
      throw new AppError('broker_error', `broker: ${refused.message}`, {brokerCode: refused.code, ...refused.details})
    }
    return res as T
  }

  /**
   * Who the broker writes on the commits. The person as the Hub knows them is only the fallback:
   * the broker prefers the checkout's `user.name`/`user.email` (broker/workspace/person.ts). The
   * task's first line becomes the message of the agent's uncommitted work (host-git.ts).
   */
  function identities(ctx: CallContext, agent: AgentRecord) {
    const p = ctx.principal as Extract<CallContext['principal'], {kind: 'user'}>
    const task = (agent.task ?? '').split('\n').map((l) => l.trim()).find(Boolean)?.slice(0, 200) ?? null
    return {
      agent: {id: agent.id, name: agent.name, task},
      author: {name: agent.name, email: `${agent.id}@svc`},
      committer: {name: p.displayName || p.id, email: p.email || `${p.id}@svc`},
    }
  }

  async function audit(ctx: CallContext, agent: AgentRecord, kind: string, details: Record<string, unknown>) {
    await store.audit.insert({id: newId(), kind, actor: {kind: ctx.principal.kind, id: ctx.principal.id}, projectId: agent.projectId, target: agent.id, details: {...details, credentialKind: ctx.credentialKind}, at: iso(clock.now())})
  }

  /**
   * Teams: an agent merges its own child's work into its own branch and work tree (the broker
   * does it inside the parent's sandbox: merge-child.ts). Its own work, a grandchild's or anyone
   * else's: 403. A person then reviews and merges the parent as any agent.
   */
  async function mergeIntoParent(ctx: CallContext, child: AgentRecord, input: {strategy?: 'merge' | 'squash'; message?: string}): Promise<MergeResultDto> {
    if (child.parent?.id !== ctx.principal.id) throw new AppError('forbidden', "an agent merges only its own children's work, into its own branch; a person lands the rest")
    const parent = await store.agents.get(ctx.principal.id)
    if (!parent?.workspace) throw new AppError('no_workspace', `agent ${parent?.name ?? ctx.principal.id} has no git workspace to merge into`)
    workspaceOf(child)
    if (parent.brokerId !== child.brokerId) throw new AppError('conflict', `agent ${child.name} runs on another broker than its parent ${parent.name}: merge it there by hand`)
    const strategy = input.strategy ?? 'merge'
    const res = await callBroker<MergeResultDto>(child, 'agent.merge', {
      strategy,
      message: input.message,
      into: {agentId: parent.id, workspace: parent.workspace},
      agent: {id: child.id, name: child.name},
      author: {name: child.name, email: `${child.id}@svc`},
      committer: {name: parent.name, email: `${parent.id}@svc`},
    }, 180_000)
    await audit(ctx, child, 'agent_merge', {strategy, commit: res.commit, baseRef: res.baseRef, branch: res.branch, files: res.files.length, into: parent.id})
    deps.logger.info({agentId: child.id, into: parent.id, strategy, commit: res.commit}, 'child agent work merged into its parent')
    return res
  }

  return {
    async diff(ctx: CallContext, ref: string, opts: {maxBytes?: number; stat?: boolean}, projectRef?: string): Promise<AgentDiff> {
      const agent = await load(ctx, ref, projectRef)
      workspaceOf(agent)
      const maxBytes = Math.min(opts.maxBytes ?? DIFF_DEFAULT_BYTES, DIFF_MAX_BYTES)
      return callBroker<AgentDiff>(agent, 'agent.diff', {maxBytes, stat: opts.stat === true}, 120_000)
    },

    async merge(ctx: CallContext, ref: string, input: {strategy?: 'merge' | 'squash'; message?: string}, projectRef?: string): Promise<MergeResultDto> {
      const agent = await load(ctx, ref, projectRef)
      if (ctx.principal.kind === 'agent') return mergeIntoParent(ctx, agent, input)
      await mayLand(ctx, agent)
      workspaceOf(agent)
      const strategy = input.strategy ?? 'merge'
      const res = await callBroker<MergeResultDto>(agent, 'agent.merge', {strategy, message: input.message, ...identities(ctx, agent)}, 180_000)
      await audit(ctx, agent, 'agent_merge', {strategy, commit: res.commit, baseRef: res.baseRef, branch: res.branch, files: res.files.length})
      deps.logger.info({agentId: agent.id, by: ctx.principal.id, strategy, commit: res.commit}, 'agent work merged')
      return res
    },

    async push(ctx: CallContext, ref: string, projectRef?: string): Promise<PushResultDto> {
      const agent = await load(ctx, ref, projectRef)
      await mayLand(ctx, agent)
      workspaceOf(agent)
      const res = await callBroker<PushResultDto>(agent, 'agent.push', identities(ctx, agent), 240_000)
      await audit(ctx, agent, 'agent_push', {remote: res.remote, branch: res.branch, commit: res.commit})
      return res
    },
  }
}

export type ReviewService = ReturnType<typeof createReviewService>
