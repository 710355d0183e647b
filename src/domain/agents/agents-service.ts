import {AppError, notFound} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {CallContext} from '../authz/context.js'
import type {BrokerGateway, TunnelStream} from '../brokers/gateway.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import type {AgentAccess} from './access.js'
import {BUILTIN_HARNESS_CONFIGS, type AgentSettingsSource} from './agent-settings.js'
import {ACTIVITIES, agentView, PHASES, type AgentView} from './agent-state.js'
import type {AgentTokens} from './agent-tokens.js'
import {placeHubCloudIdentity} from './cloud-identity-placement.js'
import {checkQuotas, chooseBroker} from './dispatch.js'
import {AGENT_ROLES} from './scopes.js'
import {recordDelegation} from '../delegation/record-edge.js'
import {reincarnateEdge} from '../delegation/reincarnate.js'
import {agentTelemetryOverride} from '../../telemetry/overrides.js'
import {BY_FIELD} from '../project-settings/registry.js'
import {resolveAgentDefaults} from '../project-settings/resolve.js'
import type {StatusWriter} from './status-writer.js'

export interface CreateAgentInput {
  name: string
  projectId: string
  harnessConfig?: string
  template?: string
  task?: string
  brokerId?: string
  role?: string
  maxTurns?: number
  maxModelCalls?: number
  maxDuration?: string
  resources?: Record<string, unknown>
  model?: string
  thinkingLevel?: string
  timezone?: string
  cloudIdentityMode?: string
  cloudIdentityServiceAccountId?: string
  /** Telemetry settings of this agent over its template's and the Hub's (the `telemetry` table). */
  telemetry?: unknown
}

/** Request fields that override the registered project settings (same validation). */
const REQUEST_FIELDS: Record<string, string> = {
  harnessConfig: 'defaultHarnessConfig',
  template: 'defaultTemplate',
  role: 'defaultAgentRole',
  maxTurns: 'defaultMaxTurns',
  maxModelCalls: 'defaultMaxModelCalls',
  maxDuration: 'defaultMaxDuration',
  resources: 'defaultResources',
  model: 'defaultModel',
  thinkingLevel: 'defaultThinkingLevel',
  timezone: 'defaultTimezone',
  cloudIdentityMode: 'defaultCloudIdentityMode',
  cloudIdentityServiceAccountId: 'defaultCloudIdentityServiceAccountId',
}

/** Validates the request's overrides with the registry's rules; returns them keyed by setting field. */
function requestLayer(input: CreateAgentInput): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const fields: Array<{path: string; message: string}> = []
  for (const [inputField, settingField] of Object.entries(REQUEST_FIELDS)) {
    const v = (input as unknown as Record<string, unknown>)[inputField]
    if (v === undefined) continue
    try {
      const def = BY_FIELD.get(settingField)!
      out[settingField] = def.parse(def.toRaw(v))
    } catch (err) {
      fields.push({path: inputField, message: (err as Error).message})
    }
  }
  if (fields.length) throw new AppError('validation_error', `invalid agent: ${fields.map((f) => `${f.path} ${f.message}`).join('; ')}`, {fields})
  return out
}

export interface AgentServiceDeps {
  access: AgentAccess
  tokens: AgentTokens
  status: StatusWriter
  gateway: BrokerGateway
  settings: AgentSettingsSource
  /** The Hub's own co-located broker, when it runs one. */
  colocatedBrokerId: () => string | null
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/
const fieldError = (path: string, message: string) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}]})
// Keep at most this much of an agent's output when it ends.
const MAX_ARCHIVE_BYTES = 4 * 1024 * 1024

/** Agent environment from applied defaults: TZ when a timezone applies (empty means image default). */
function envFromApplied(applied: Record<string, {value: unknown}> | undefined): Record<string, string> {
  const tz = applied?.defaultTimezone?.value
  return typeof tz === 'string' && tz ? {TZ: tz} : {}
}

export function createAgentsService(deps: Deps, a: AgentServiceDeps) {
  const {store, clock} = deps
  const now = () => iso(clock.now())
  // `mark` is the status writer's read mark taken before the row was read (see status-writer).
  const view = (r: AgentRecord, mark?: number) => agentView(r, a.status.pendingFor(r.id, mark), clock.now().getTime())
  const walk = a.access.walk

  /** The current version's files of a template (base64), for the broker to lay out. */
  async function templateFilesOf(templateId: string): Promise<Array<{path: string; content: string}> | undefined> {
    const t = await store.templates.get(templateId)
    if (!t) return undefined
    const versions = await store.templates.versions(templateId)
    const current = versions.find((v) => v.seq === t.currentVersion)
    if (!current) return undefined
    const out: Array<{path: string; content: string}> = []
    for (const m of current.manifest) out.push({path: m.path, content: (await store.templates.file(templateId, current.seq, m.path)) ?? ''})
    return out
  }

  async function projectIdOf(idOrSlug: string): Promise<string> {
    const p = (await store.projects.get(idOrSlug)) ?? (await store.projects.getBySlug(idOrSlug))
    if (!p) throw notFound('project')
    return p.id
  }

  async function load(ctx: CallContext, ref: string, permission: Parameters<AgentAccess['checkAgent']>[2], projectRef?: string): Promise<AgentRecord> {
    const projectId = projectRef ? await projectIdOf(projectRef) : undefined
    const agent = await a.access.resolve(ref, projectId)
    if (!agent) throw notFound('agent')
    await a.access.checkAgent(ctx, agent, permission)
    return agent
  }

  function archive(agentId: string, base64: string | undefined) {
    if (!base64) return Promise.resolve()
    let text = Buffer.from(base64, 'base64').toString('utf8')
    if (text.length > MAX_ARCHIVE_BYTES) text = text.slice(-MAX_ARCHIVE_BYTES)
    return store.agents.putLogArchive(agentId, text, now())
  }

  /** Sends the start command; the agent is running when the broker answers. */
  async function dispatch(agent: AgentRecord): Promise<AgentRecord> {
    const settings = await a.settings()
    const {token} = await a.tokens.mint(agent)
    // Built-in configs are the broker's own (with their environment); send only configured ones.
    const configured = settings.harnessConfigs[agent.harnessConfig]
    const harness = BUILTIN_HARNESS_CONFIGS[agent.harnessConfig] === configured ? undefined : configured
    const templateFiles = agent.template ? await templateFilesOf(agent.template) : undefined
    try {
      const res = await a.gateway.request<{runtime: string; ref: string}>(
        agent.brokerId!,
        'agent.start',
        {
          agentId: agent.id,
          name: agent.name,
          projectId: agent.projectId,
          harnessConfig: agent.harnessConfig,
          harness,
          templateFiles,
          task: agent.task,
          env: {
            SVC_AUTH_TOKEN: token,
            SVC_AGENT_ID: agent.id,
            SVC_AGENT_NAME: agent.name,
            SVC_PROJECT_ID: agent.projectId,
            ...envFromApplied(agent.config.applied as Record<string, {value: unknown}> | undefined),
          },
        },
        60_000,
      )
      a.status.forget(agent.id)
      return (await store.agents.update(agent.id, {phase: 'running', activity: null, runtime: res.runtime, runtimeRef: res.ref, error: null, lastHeartbeatAt: now()}, now()))!
    } catch (err) {
      await a.tokens.revokeAll(agent.id)
      const message = err instanceof Error ? err.message : String(err)
      deps.logger.warn({agentId: agent.id, err: message}, 'dispatch failed')
      return (await store.agents.update(agent.id, {phase: 'error', error: `dispatch failed: ${message}`}, now()))!
    }
  }

  /** Stops the agent's session on its broker (when reachable) and keeps its output. */
  async function halt(agent: AgentRecord): Promise<void> {
    a.status.forget(agent.id)
    await a.tokens.revokeAll(agent.id)
    if (!agent.brokerId || !a.gateway.isConnected(agent.brokerId) || !agent.runtimeRef) return
    const res = await a.gateway.request<{log?: string}>(agent.brokerId, 'agent.stop', {agentId: agent.id}, 30_000)
    await archive(agent.id, res?.log)
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
      const brokerId = await chooseBroker({requested: input.brokerId, projectDefault: projectBroker}, settings, a.gateway, a.colocatedBrokerId(), store)
      await placeHubCloudIdentity(applied, {brokerId, colocatedBrokerId: a.colocatedBrokerId(), repos: store})

      const t = now()
      const creator = ctx.principal.kind === 'agent' ? {kind: 'agent' as const, id: ctx.principal.id} : {kind: 'user' as const, id: ctx.principal.id}
      const record = await store.transaction(async (tx) => {
        await checkQuotas(tx, projectId, brokerId, settings.quotas)
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
          runtime: null,
          runtimeRef: null,
          config: {applied: Object.fromEntries(Object.entries(applied).filter(([k]) => k !== 'defaultRuntimeBroker')), ...(telemetry && {telemetry})},
          error: null,
          createdBy: creator,
          createdAt: t,
          updatedAt: t,
        })
        // The delegation edge is written with the agent, never after it (one transaction).
        await recordDelegation(tx, ctx, inserted, t)
        return inserted
      })
      deps.logger.info({agentId: record.id, projectId, brokerId, by: creator}, 'agent created')
      deps.telemetry?.({type: 'agent.created', agentId: record.id, attributes: {'project.id': projectId, 'harness.config': harnessConfig, 'created_by.kind': creator.kind}})
      return view(await dispatch(record))
    },

    async list(ctx: CallContext, filter: {projectId?: string; userId?: string; phase?: string}): Promise<AgentView[]> {
      const mark = a.status.readMark()
      const visible = await a.access.visibleProjects(ctx)
      let projectIds = visible ?? undefined
      if (filter.projectId) {
        const pid = await projectIdOf(filter.projectId).catch(() => null)
        if (!pid || (visible && !visible.includes(pid))) return []
        projectIds = [pid]
      }
      const rows = await store.agents.list({projectIds, createdById: filter.userId})
      const views = rows.map((r) => view(r, mark))
      return filter.phase ? views.filter((v) => v.phase === filter.phase) : views
    },

    async get(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView> {
      const mark = a.status.readMark()
      return view(await load(ctx, ref, 'agent.read', projectRef), mark)
    },

    async delete(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView> {
      const agent = await load(ctx, ref, 'agent.delete', projectRef)
      try {
        await halt(agent)
      } catch (err) {
        deps.logger.warn({agentId: agent.id, err: (err as Error).message}, 'stopping a deleted agent failed; the broker reconciles it when it reconnects')
      }
      const deleted = (await store.agents.update(agent.id, {phase: 'stopped', activity: null, deletedAt: now()}, now()))!
      deps.logger.info({agentId: agent.id, by: ctx.principal.id}, 'agent deleted')
      deps.telemetry?.({type: 'agent.deleted', agentId: agent.id, attributes: {'project.id': agent.projectId}})
      return view(deleted)
    },

    async stop(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView> {
      const agent = await load(ctx, ref, 'agent.lifecycle', projectRef)
      await halt(agent)
      return view((await store.agents.update(agent.id, {phase: 'stopped', activity: null}, now()))!)
    },

    async start(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView> {
      const agent = await load(ctx, ref, 'agent.lifecycle', projectRef)
      if (agent.phase === 'running' && agent.brokerId && a.gateway.isConnected(agent.brokerId)) return view(agent)
      const settings = await a.settings()
      const brokerId = agent.brokerId && a.gateway.isConnected(agent.brokerId) ? agent.brokerId : await chooseBroker({}, settings, a.gateway, a.colocatedBrokerId(), store)
      // A stopped or failed agent does not count against the quotas, so starting it again is
      // checked like a create (else create, stop, create, start went over the cap).
      const wasLive = agent.phase !== 'stopped' && agent.phase !== 'error'
      const ready = await store.transaction(async (tx) => {
        if (!wasLive) await checkQuotas(tx, agent.projectId, brokerId, settings.quotas)
        return (await tx.agents.update(agent.id, {phase: 'provisioning', brokerId, error: null}, now()))!
      })
      return view(await dispatch(ready))
    },

    async restart(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView> {
      await this.stop(ctx, ref, projectRef)
      return this.start(ctx, ref, projectRef)
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
      return updated.phase === 'running' || updated.phase === 'provisioning' ? this.restart(ctx, agent.id) : view(updated)
    },

    /**
     * The agent's own status report (or its broker's). Cheap by design: validated, then
     * coalesced in memory; the writer flushes in batches.
     */
    async reportStatus(ctx: CallContext, ref: string, report: {phase?: string; activity?: string; detail?: string; heartbeat?: boolean}): Promise<void> {
      if (report.phase !== undefined && !(PHASES as readonly string[]).includes(report.phase)) throw fieldError('phase', `must be one of ${PHASES.join(', ')}`)
      if (report.activity !== undefined && !(ACTIVITIES as readonly string[]).includes(report.activity)) throw fieldError('activity', `must be one of ${ACTIVITIES.join(', ')}`)
      const p = ctx.principal
      // Fast path: an agent reporting on itself needs no read.
      if (!(p.kind === 'agent' && p.id === ref)) {
        const agent = await load(ctx, ref, 'agent.status_update')
        ref = agent.id
      }
      a.status.report(ref, {phase: report.phase, activity: report.activity, detail: report.detail})
      // Queued for export, never awaited: a dead collector costs a status report nothing.
      const attributes = Object.fromEntries(Object.entries({phase: report.phase, activity: report.activity, detail: report.detail}).filter(([, v]) => v !== undefined)) as Record<string, string>
      // A bare heartbeat has its own type, so it can be sampled or excluded apart from changes.
      deps.telemetry?.({type: Object.keys(attributes).length ? 'agent.status' : 'agent.heartbeat', agentId: ref, attributes})
    },

    async refreshToken(ctx: CallContext, ref: string, current: string): Promise<{token: string; expiresAt: string}> {
      if (ctx.principal.kind !== 'agent' || ctx.principal.id !== ref) throw new AppError('forbidden', 'only the agent itself refreshes its token')
      return a.tokens.refresh(ref, current)
    },

    /** Archived output, or the live output from the broker while the agent runs. */
    async logs(ctx: CallContext, ref: string, projectRef?: string): Promise<string> {
      const agent = await load(ctx, ref, 'agent.read', projectRef)
      if (agent.brokerId && agent.runtimeRef && agent.phase === 'running' && a.gateway.isConnected(agent.brokerId)) {
        const res = await a.gateway.request<{log: string}>(agent.brokerId, 'agent.logs', {agentId: agent.id}, 30_000)
        return Buffer.from(res.log, 'base64').toString('utf8')
      }
      return (await store.agents.logArchive(agent.id)) ?? ''
    },

    /** A live stream from the agent's broker: `agent.logs.follow` or `agent.attach`. */
    async openStream(ctx: CallContext, ref: string, kind: 'logs' | 'attach', params: Record<string, unknown>, projectRef?: string): Promise<TunnelStream> {
      const agent = await load(ctx, ref, kind === 'attach' ? 'agent.attach' : 'agent.read', projectRef)
      if (agent.phase !== 'running' || !agent.runtimeRef) throw new AppError('conflict', `agent ${agent.name} is not running (phase ${agent.phase})`)
      if (!agent.brokerId || !a.gateway.isConnected(agent.brokerId)) throw new AppError('broker_unavailable', `the broker of agent ${agent.name} is not connected`)
      return a.gateway.openStream(agent.brokerId, kind === 'attach' ? 'agent.attach' : 'agent.logs.follow', {agentId: agent.id, ...params})
    },

    // Events from brokers

    /** A broker says which agents it runs: stop what the Hub deleted, mark lost sessions. */
    async reconcile(brokerId: string, running: string[]): Promise<void> {
      const known = await store.agents.list({brokerId, includeDeleted: true})
      const byId = new Map(known.map((k) => [k.id, k]))
      for (const id of running) {
        const rec = byId.get(id)
        if (!rec || rec.deletedAt || rec.phase === 'stopped') {
          await a.gateway.request(brokerId, 'agent.stop', {agentId: id}, 30_000).catch(() => {})
        }
      }
      const live = new Set(running)
      for (const rec of known) {
        if (!rec.deletedAt && rec.phase === 'running' && !live.has(rec.id)) {
          // A report still pending would otherwise write its phase over the stop.
          a.status.forget(rec.id)
          await store.agents.update(rec.id, {phase: 'stopped', activity: null, error: 'the broker no longer runs this agent'}, now())
        }
      }
    },

    async brokerReportedStatus(brokerId: string, ev: {agentId: string; phase: string; detail?: string; error?: string; log?: string}): Promise<void> {
      const agent = await store.agents.get(ev.agentId)
      if (!agent || agent.brokerId !== brokerId || agent.deletedAt) return
      if (!(PHASES as readonly string[]).includes(ev.phase)) return
      await archive(agent.id, ev.log)
      a.status.forget(agent.id)
      await store.agents.update(agent.id, {phase: ev.phase, ...(ev.detail !== undefined && {detail: ev.detail}), ...(ev.error !== undefined && {error: ev.error}), ...(ev.phase !== 'running' && {activity: null})}, now())
      if (ev.phase === 'stopped' || ev.phase === 'error') await a.tokens.revokeAll(agent.id)
    },

    /** The broker sees these agents' sessions alive: that counts as their heartbeat. */
    brokerReportedAlive(agentIds: string[]): void {
      for (const id of agentIds) a.status.report(id, {})
    },

    countInProject: (projectId: string) => store.agents.countByProject(projectId),
  }
}

export type AgentsService = ReturnType<typeof createAgentsService>
