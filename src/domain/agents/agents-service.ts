import {AppError, notFound} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {CallContext} from '../authz/context.js'
import type {BrokerGateway, TunnelStream} from '../brokers/gateway.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import type {AgentAccess} from './access.js'
import type {AgentSettingsSource} from './agent-settings.js'
import {ACTIVITIES, agentView, PHASES, type AgentView} from './agent-state.js'
import {shownTo} from '../approvals/detail-visibility.js'
import type {AgentTokens} from './agent-tokens.js'
import {placeHubCloudIdentity} from './cloud-identity-placement.js'
import {brokerOfStart, checkQuotas, chooseBroker, insertPlaced} from './dispatch.js'
import {AGENT_ROLES} from './scopes.js'
import {recordDelegation} from '../delegation/record-edge.js'
import {reincarnateEdge} from '../delegation/reincarnate.js'
import {agentTelemetryOverride} from '../../telemetry/overrides.js'
import {resolveAgentDefaults} from '../project-settings/resolve.js'
import type {StatusWriter} from './status-writer.js'
import {requestLayer, type CreateAgentInput} from './create-input.js'
import {createLauncher, type SecretValues} from './launch.js'
import type {SessionUsage} from '../../broker/harnesses/types.js'
import {recordUsage} from './usage.js'
import {checkChildRole, resolveParent} from '../teams/parent.js'
import {createBrokerReports} from './broker-reports.js'
import {appliedWithLimits, budgetForNewAgent, validateLimits} from '../teams/budgets.js'
import {createBudgetEnforcer} from '../teams/budget-enforcer.js'
import {createAttemptChecks} from '../teams/attempts-check.js'
import {releasingOnClose, type StreamGate} from './stream-slots.js'
import {requireAttachReach, type AttachAction} from './attach-reach.js'
import {withLanded} from './landed.js'
import {maskingStream, maskPatterns} from './log-masking.js'
import {deletedWithLogs, pruneDeletedLogs, servedLog, type LogFormat} from './agent-logs.js'
import {deletedBranch, type DeletedBranchDto} from './delete-branch.js'

/** The body of `POST /agents/:id/status` (a harness's hook adds `turnEnded` and `usage`). */
export interface StatusReportInput {
  phase?: string
  activity?: string
  detail?: string
  heartbeat?: boolean
  /** The harness ended a turn: counted against `max_turns`. */
  turnEnded?: boolean
  /** A harness's API, auth or network failure on the running agent; null clears it. */
  error?: string | null
  /** Cumulative usage of the harness's current session (see broker/harnesses/types.ts). */
  usage?: SessionUsage
}

export interface AgentServiceDeps {
  access: AgentAccess
  tokens: AgentTokens
  status: StatusWriter
  gateway: BrokerGateway
  settings: AgentSettingsSource
  /** The Hub's own co-located broker, when it runs one. */
  colocatedBrokerId: () => string | null
  /** While the co-located broker starts: settles once it is connected (or gave up). */
  colocatedStarting?: () => Promise<unknown> | null
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/
const fieldError = (path: string, message: string) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}]})

export type {CreateAgentInput}

export function createAgentsService(deps: Deps, a: AgentServiceDeps) {
  const {store, clock} = deps
  const now = () => iso(clock.now())
  // `mark` is the status writer's read mark taken before the row was read (see status-writer).
  const view = (r: AgentRecord, mark?: number) => agentView(r, a.status.pendingFor(r.id, mark), clock.now().getTime())
  // The view as the caller may read it: another agent reads only the label of its detail (a command may hold a secret).
  const viewAs = (ctx: CallContext, r: AgentRecord, mark?: number) => shownTo(ctx.principal, view(r, mark))
  const walk = a.access.walk
  // Project and user secrets, decrypted by the secrets service (bound by the composition root).
  let secretValues: SecretValues = async () => ({})
  const {templateFilesOf, archive, dispatch, halt, gatherSecrets, secretValuesOf} = createLauncher(deps, a, () => secretValues)

  async function projectIdOf(idOrSlug: string): Promise<string> {
    const p = (await store.projects.get(idOrSlug)) ?? (await store.projects.getBySlug(idOrSlug))
    if (!p) throw notFound('project')
    return p.id
  }

  /** The agent, authorized; with `reach`, an agent caller must reach it (attach-reach.ts) or gets 404. */
  async function load(ctx: CallContext, ref: string, permission: Parameters<AgentAccess['checkAgent']>[2], projectRef?: string, reach?: AttachAction, deletedToo = false): Promise<AgentRecord> {
    const projectId = projectRef ? await projectIdOf(projectRef) : undefined
    const agent = (await a.access.resolve(ref, projectId)) ?? (deletedToo ? await deletedWithLogs(store, ref, projectId, clock.now(), deps.config.deletedAgentLogsRetentionMs) : null)
    if (!agent) throw notFound('agent')
    if (reach) await requireAttachReach(store, ctx, agent, reach)
    await a.access.checkAgent(ctx, agent, permission)
    return agent
  }

  // Turns, model calls and cost against the limits of the agent and of every ancestor (teams/budget-enforcer.ts).
  const budgets = createBudgetEnforcer(store, stopForLimit, deps.logger)
  // Attempts: a `check` runs in the agent's sandbox whenever it goes idle (teams/attempts-check.ts).
  const checks = createAttemptChecks(store, a.gateway, deps.logger, now)

  /** A limit was exceeded: the agent is stopped and says why (activity `limits_exceeded`). */
  async function stopForLimit(agent: AgentRecord, detail: string): Promise<void> {
    try {
      await halt(agent)
    } catch (err) {
      deps.logger.warn({agentId: agent.id, err: (err as Error).message}, 'stopping an agent over its limit failed; it is marked stopped')
    }
    await store.agents.update(agent.id, {phase: 'stopped', activity: 'limits_exceeded', detail}, now()).catch((err) => deps.logger.warn({agentId: agent.id, err}, 'marking an agent stopped over its limit failed'))
    deps.logger.info({agentId: agent.id, detail}, 'agent stopped: limit exceeded')
  }

  return {
    async create(ctx: CallContext, input: CreateAgentInput): Promise<AgentView> {
      if (!NAME.test(input.name)) throw fieldError('name', 'must be 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit')
      const projectId = await projectIdOf(input.projectId)
      await a.access.checkProject(ctx, projectId, 'agent.create')
      const settings = await a.settings()
      // One resolver decides every default: request, then project annotation, then hub, then coded.
      const applied = resolveAgentDefaults({
        request: requestLayer(input),
        project: await store.projectAnnotations.all(projectId),
        hub: settings.defaults,
      })
      const harnessConfig = String(applied.defaultHarnessConfig.value)
      if (!settings.harnessConfigs[harnessConfig]) {
        throw fieldError('harnessConfig', `"${harnessConfig}" is not a harness config (known: ${Object.keys(settings.harnessConfigs).sort().join(', ')})`)
      }
      const role = String(applied.defaultAgentRole.value)
      if (!(AGENT_ROLES as readonly string[]).includes(role)) throw fieldError('role', `must be one of ${AGENT_ROLES.join(', ')}`)
      // The child would get an assign-mode service account: its creating agent must hold the
      // assign permission along its chain (V1 rules 1 and 6). Users are decided by their role.
      if (applied.defaultCloudIdentityMode?.value === 'Assign') await walk.requireServiceAccountAssign(ctx)
      const askedLimits = validateLimits(input.limits)
      const parent = await resolveParent(a.access, ctx, projectId, input.parentId)
      checkChildRole(role, parent)
      let template: string | null = null
      const templateRef = applied.defaultTemplate.value as string | null
      if (templateRef) {
        const t = (await store.templates.get(templateRef)) ?? (await store.templates.getByName(projectId, templateRef)) ?? (await store.templates.getByName(null, templateRef))
        if (!t || (t.projectId && t.projectId !== projectId)) throw fieldError('template', `"${templateRef}" is not a template of this project or the hub`)
        template = t.id
      }
      if (await store.agents.getByName(projectId, input.name)) throw new AppError('conflict', `an agent named ${input.name} already exists in this project`)
      const telemetry = agentTelemetryOverride({templateFiles: template ? await templateFilesOf(template) : undefined, requested: input.telemetry})
      const project = await store.projects.get(projectId)
      const projectBroker = applied.defaultRuntimeBroker.from === 'project' ? (applied.defaultRuntimeBroker.value as string) : project?.defaultBrokerId
      // A child works from its parent's branch: on its parent's broker when that one is online.
      // Each placement narrows the hub's cloud identity default for its broker (in `applied`),
      // from what the settings gave: a create placed again starts from those, not the last narrowing.
      const given = Object.fromEntries(Object.entries(applied).filter(([k]) => k.startsWith('defaultCloudIdentity')))
      const place = async () => {
        Object.assign(applied, given)
        const id = await chooseBroker({requested: input.brokerId, projectDefault: parent?.brokerId ?? projectBroker, runtime: input.runtime}, settings, a.gateway, a.colocatedBrokerId, store, a.colocatedStarting)
        await placeHubCloudIdentity(applied, {brokerId: id, colocatedBrokerId: a.colocatedBrokerId(), repos: store})
        return id
      }
      const placed = await place()
      const creator = ctx.principal.kind === 'agent' ? {kind: 'agent' as const, id: ctx.principal.id} : {kind: 'user' as const, id: ctx.principal.id}
      // Refused before anything is written: the harness's secrets must all be there.
      await gatherSecrets({id: '', projectId, createdBy: creator}, harnessConfig, settings.harnessConfigs[harnessConfig])

      const t = now()
      const insert = (brokerId: string) => store.transaction(async (tx) => {
        await checkQuotas(tx, projectId, brokerId, settings.quotas)
        // Past an ancestor's maxChildren or maxDepth: 429 budget_exceeded, nothing written.
        const limits = await budgetForNewAgent(tx, parent, askedLimits, applied, clock.now().getTime())
        const inserted = await tx.agents.insert({
          id: newId(),
          projectId,
          name: input.name,
          brokerId,
          phase: 'provisioning',
          activity: null,
          detail: '',
          harnessConfig,
          template,
          task: input.task ?? null,
          role,
          // Asked for at create, else the broker's default at the first dispatch (launch.ts); kept by restarts.
          runtime: input.runtime ?? null,
          runtimeRef: null,
          config: {applied: Object.fromEntries(Object.entries(appliedWithLimits(applied, limits)).filter(([k]) => k !== 'defaultRuntimeBroker')), ...(telemetry && {telemetry})},
          error: null,
          createdBy: creator,
          parent: parent && {id: parent.id, name: parent.name},
          limits,
          group: input.group ?? null,
          checkCommand: input.check ?? null,
          createdAt: t,
          updatedAt: t,
        })
        // The delegation edge is written with the agent, never after it (one transaction).
        await recordDelegation(tx, ctx, inserted, t)
        return inserted
      })
      const {record, brokerId} = await insertPlaced(placed, place, insert, !!input.brokerId)
      deps.logger.info({agentId: record.id, projectId, brokerId, by: creator}, 'agent created')
      deps.telemetry?.({type: 'agent.created', agentId: record.id, attributes: {'project.id': projectId, 'harness.config': harnessConfig, 'created_by.kind': creator.kind}})
      try {
        return viewAs(ctx, await dispatch(record))
      } catch (err) {
        // The broker made nothing (no harness, bad checkout, branch taken): neither does the Hub,
        // so the same create can be retried at once under the same name.
        await store.agents.update(record.id, {phase: 'stopped', activity: null, deletedAt: now()}, now())
        deps.logger.info({agentId: record.id, err: (err as Error).message}, 'agent create refused by its broker; the agent is removed')
        throw err
      }
    },

    /** Binds how secret values are read (the secrets service, built after this one). */
    useSecrets(values: SecretValues) {
      secretValues = values
    },

    async list(ctx: CallContext, filter: {projectId?: string; userId?: string; phase?: string; group?: string}): Promise<AgentView[]> {
      const mark = a.status.readMark()
      const visible = await a.access.visibleProjects(ctx)
      let projectIds = visible ?? undefined
      if (filter.projectId) {
        // Unknown and unseen projects are one 404: an empty list for a typo would read as success.
        const pid = await projectIdOf(filter.projectId)
        if (visible && !visible.includes(pid)) throw notFound('project')
        projectIds = [pid]
      }
      const rows = await store.agents.list({projectIds, createdById: filter.userId, group: filter.group})
      const views = rows.map((r) => viewAs(ctx, r, mark))
      return withLanded(store, filter.phase ? views.filter((v) => v.phase === filter.phase) : views)
    },

    async get(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView> {
      const mark = a.status.readMark()
      return (await withLanded(store, [viewAs(ctx, await load(ctx, ref, 'agent.read', projectRef), mark)]))[0]
    },

    async delete(ctx: CallContext, ref: string, projectRef?: string, opts: {branch?: boolean} = {}): Promise<{agent: AgentView; branch?: DeletedBranchDto}> {
      const agent = await load(ctx, ref, 'agent.delete', projectRef)
      let [answered, failure]: [DeletedBranchDto | undefined, string | undefined] = [undefined, undefined]
      try {
        answered = await halt(agent, {removeWorkspace: true, deleteBranch: opts.branch})
      } catch (err) {
        deps.logger.warn({agentId: agent.id, err: (failure = (err as Error).message)}, 'stopping a deleted agent failed; the broker reconciles it when it reconnects')
      }
      const deleted = (await store.agents.update(agent.id, {phase: 'stopped', activity: null, deletedAt: now()}, now()))!
      await store.agentPorts.release(agent.id)
      deps.logger.info({agentId: agent.id, by: ctx.principal.id}, 'agent deleted')
      await pruneDeletedLogs(deps, clock.now())
      deps.telemetry?.({type: 'agent.deleted', agentId: agent.id, attributes: {'project.id': agent.projectId}})
      return {agent: viewAs(ctx, deleted), ...(opts.branch && {branch: deletedBranch(agent, answered, failure)})}
    },

    async stop(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView> {
      const agent = await load(ctx, ref, 'agent.lifecycle', projectRef)
      await halt(agent)
      return viewAs(ctx, (await store.agents.update(agent.id, {phase: 'stopped', activity: null}, now()))!)
    },

    /** `setup`: the workspace's setup runs again (a restart that asks: docs/environments.md). */
    async start(ctx: CallContext, ref: string, projectRef?: string, opts: {setup?: boolean} = {}): Promise<AgentView> {
      const agent = await load(ctx, ref, 'agent.lifecycle', projectRef)
      if (agent.phase === 'running' && agent.brokerId && a.gateway.isConnected(agent.brokerId)) return viewAs(ctx, agent)
      const settings = await a.settings()
      const brokerId = await brokerOfStart(agent, () => chooseBroker({runtime: agent.runtime}, settings, a.gateway, a.colocatedBrokerId, store, a.colocatedStarting), a.gateway, store)
      // A stopped or failed agent does not count against the quotas, so starting it again is
      // checked like a create (else create, stop, create, start went over the cap).
      const wasLive = agent.phase !== 'stopped' && agent.phase !== 'error'
      // Refused before anything is written, as at create: a secret deleted since is asked for
      // again instead of leaving the agent half started.
      const configured = settings.harnessConfigs[agent.harnessConfig]
      if (configured) await gatherSecrets(agent, agent.harnessConfig, configured)
      const ready = await store.transaction(async (tx) => {
        if (!wasLive) await checkQuotas(tx, agent.projectId, brokerId, settings.quotas)
        return (await tx.agents.update(agent.id, {phase: 'provisioning', brokerId, error: null}, now()))!
      })
      return viewAs(ctx, await dispatch(ready, {runSetup: opts.setup === true}))
    },

    async restart(ctx: CallContext, ref: string, projectRef?: string, opts: {setup?: boolean} = {}): Promise<AgentView> {
      // Refused before the stop when its broker is gone: a restart never moves an agent.
      const agent = await load(ctx, ref, 'agent.lifecycle', projectRef)
      await brokerOfStart(agent, async () => '', a.gateway, store)
      await this.stop(ctx, ref, projectRef)
      return this.start(ctx, ref, projectRef, opts)
    },

    /**
     * Reincarnation (`agent.lifecycle` on the agent): re-records the agent's delegation edge
     * when the rules say so (delegation/reincarnate.ts), then restarts a running agent so it
     * gets a fresh token minted from its (possibly new) role.
     */
    async reincarnate(ctx: CallContext, ref: string, input: {role?: string}, projectRef?: string): Promise<AgentView> {
      const agent = await load(ctx, ref, 'agent.lifecycle', projectRef)
      if (input.role !== undefined && !(AGENT_ROLES as readonly string[]).includes(input.role)) throw fieldError('role', `must be one of ${AGENT_ROLES.join(', ')}`)
      const updated = await reincarnateEdge(store, ctx, agent, input.role, now())
      deps.logger.info({agentId: agent.id, by: ctx.principal.id, role: updated.role}, 'agent reincarnated')
      return updated.phase === 'running' || updated.phase === 'provisioning' ? this.restart(ctx, agent.id) : viewAs(ctx, updated)
    },

    /**
     * The agent's own status report (or its broker's). Validated, then coalesced with others
     * into one write; answered once that write committed (status-writer.ts). An agent's
     * credential reports only on an agent that is live (`running`, or starting), checked in that
     * write: a session the broker does not hold cannot bring its agent back, nor show it busy
     * (409 `agent_not_running`). A report that the harness went on has also settled the
     * approvals answered at its terminal by then (the writer's `settleApprovals`, services.ts).
     */
    async reportStatus(ctx: CallContext, ref: string, report: StatusReportInput): Promise<void> {
      if (report.phase !== undefined && !(PHASES as readonly string[]).includes(report.phase)) throw fieldError('phase', `must be one of ${PHASES.join(', ')}`)
      if (report.activity !== undefined && !(ACTIVITIES as readonly string[]).includes(report.activity)) throw fieldError('activity', `must be one of ${ACTIVITIES.join(', ')}`)
      const p = ctx.principal
      // Fast path: an agent reporting on itself needs no read (its liveness is checked in the write).
      if (!(p.kind === 'agent' && p.id === ref)) {
        const agent = await load(ctx, ref, 'agent.status_update')
        ref = agent.id
      }
      // An activity reported without `error` means the harness works again: its failure is cleared.
      const error = report.error !== undefined ? report.error : report.activity !== undefined ? null : undefined
      await a.status.report(ref, {phase: report.phase, activity: report.activity, detail: report.detail, error}, {liveOnly: p.kind === 'agent'})
      // Usage totals (agents/usage.ts) and turns, written first; then the agent's and its ancestors'
      // limits are checked, and a subtree over one is stopped before the report is answered.
      if (report.usage) await recordUsage(store, ref, report.usage, now())
      if (report.turnEnded) await store.agents.incrementTurns(ref, now())
      if (report.usage || report.turnEnded) await budgets.check(ref)
      if (report.activity === 'idle') checks.onIdle(ref)
      // Queued for export, never awaited: a dead collector costs a status report nothing.
      if (!deps.telemetry) return
      // The fields reported, set one by one (the Hub's most frequent request: no arrays built for it).
      const attributes: Record<string, string> = {}
      if (report.phase !== undefined) attributes.phase = report.phase
      if (report.activity !== undefined) attributes.activity = report.activity
      if (report.detail !== undefined) attributes.detail = report.detail
      // A bare heartbeat has its own type, so it can be sampled or excluded apart from changes.
      const bare = report.phase === undefined && report.activity === undefined && report.detail === undefined
      deps.telemetry({type: bare ? 'agent.heartbeat' : 'agent.status', agentId: ref, attributes})
    },

    async refreshToken(ctx: CallContext, ref: string, current: string): Promise<{token: string; expiresAt: string}> {
      if (ctx.principal.kind !== 'agent' || ctx.principal.id !== ref) throw new AppError('forbidden', 'only the agent itself refreshes its token')
      return a.tokens.refresh(ref, current)
    },

    /** Archived or live output as screen text (or raw bytes), masked (agent-logs.ts); a deleted agent's by ID for a while. */
    async logs(ctx: CallContext, ref: string, projectRef?: string, format: LogFormat = 'screen'): Promise<string> {
      const agent = await load(ctx, ref, 'agent.read', projectRef, 'logs', true)
      let text: string
      if (agent.brokerId && agent.runtimeRef && agent.phase === 'running' && a.gateway.isConnected(agent.brokerId)) {
        const res = await a.gateway.request<{log: string}>(agent.brokerId, 'agent.logs', {agentId: agent.id}, 30_000)
        text = Buffer.from(res.log, 'base64').toString('utf8')
      } else text = (await store.agents.logArchive(agent.id)) ?? ''
      return servedLog(text, maskPatterns(await secretValuesOf(agent)), format)
    },

    /** A live stream from the agent's broker: `agent.logs.follow` or `agent.attach`. */
    async openStream(ctx: CallContext, ref: string, kind: 'logs' | 'attach', params: Record<string, unknown>, projectRef?: string, gate?: StreamGate): Promise<TunnelStream> {
      const agent = await load(ctx, ref, kind === 'attach' ? 'agent.attach' : 'agent.read', projectRef, kind)
      // Followed logs are masked like the text (an attach is a terminal its user types into).
      const patterns = kind === 'logs' ? maskPatterns(await secretValuesOf(agent)) : []
      if (agent.phase !== 'running' || !agent.runtimeRef) throw new AppError('conflict', `agent ${agent.name} is not running (phase ${agent.phase})`)
      if (!agent.brokerId || !a.gateway.isConnected(agent.brokerId)) throw new AppError('broker_unavailable', `the broker of agent ${agent.name} is not connected`)
      // The slot is taken before the broker opens anything (an attach is a terminal client there).
      const release = gate?.(ctx, agent.id) ?? (() => {})
      try {
        return releasingOnClose(maskingStream(await a.gateway.openStream(agent.brokerId, kind === 'attach' ? 'agent.attach' : 'agent.logs.follow', {agentId: agent.id, ...params}), patterns), release)
      } catch (err) {
        release()
        throw err
      }
    },

    // Events from brokers

    ...createBrokerReports(deps, {gateway: a.gateway, status: a.status, tokens: a.tokens, archive, durationRanOut: (id) => budgets.durationRanOut(id)}),

    countInProject: (projectId: string) => store.agents.countByProject(projectId),
  }
}

export type AgentsService = ReturnType<typeof createAgentsService>
