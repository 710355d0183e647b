import {AppError, notFound} from '../../api/app-error.js'
import {carriesRaw, INGRESS, logRawRefusal, PROJECT_KEYS_ROUTE, rawRefusal, type Ingress} from '../../api/raw-input.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {MessageRecord} from '../../store/repositories/messages.js'
import type {CallContext} from '../authz/context.js'
import type {AgentAccess} from '../agents/access.js'
import type {AgentSettingsSource} from '../agents/agent-settings.js'
import {SCOPE} from '../agents/scopes.js'
import type {BrokerGateway} from '../brokers/gateway.js'
import {iso, parseDuration} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import {parseMessageBody, type MessageBody} from './message-body.js'

export interface MessageServiceDeps {
  access: AgentAccess
  gateway: BrokerGateway
  settings: AgentSettingsSource
}

type Sender = {kind: string; id: string}

/**
 * Messages to agents: persisted, then delivered to the running agent's terminal (bracketed
 * paste then Enter; `plain` types it as keystrokes instead; `interrupt` first sends the
 * harness's interrupt key). Every ingress refuses raw input first, writing nothing.
 */
export function createMessagesService(deps: Deps, m: MessageServiceDeps) {
  const {store, clock, logger} = deps
  const now = () => iso(clock.now())

  function refuseRaw(body: unknown, text: string | null | undefined, ingress: Ingress, replacement?: string) {
    if (!carriesRaw(body, text)) return
    const err = rawRefusal(ingress, replacement)
    logRawRefusal(logger, err)
    throw err
  }

  async function projectIdOf(ref: string): Promise<string | null> {
    return ((await store.projects.get(ref)) ?? (await store.projects.getBySlug(ref)))?.id ?? null
  }

  async function interruptKeyOf(agent: AgentRecord): Promise<string> {
    const cfg = (await m.settings()).harnessConfigs[agent.harnessConfig] as {harness?: string; interrupt_key?: string} | undefined
    if (cfg?.interrupt_key) return cfg.interrupt_key
    return (cfg?.harness ?? agent.harnessConfig) === 'shell' ? 'C-c' : 'Escape'
  }

  /** May this caller message agents of the project? Users need `agent.message`; agents `agent:notify` in their own project. */
  async function checkMessage(ctx: CallContext, projectId: string) {
    const p = ctx.principal
    if (p.kind === 'agent') {
      if (p.projectId !== projectId) throw notFound('agent')
      if (!ctx.scopes?.has(SCOPE.notify)) throw new AppError('forbidden', `this agent's token lacks ${SCOPE.notify}`)
      // Messaging other agents is delegated authority: agent.notify along the chain.
      await m.access.walk.require(ctx, 'agent.notify', {message: 'not allowed: agent.notify on project'})
      return
    }
    await m.access.checkProject(ctx, projectId, 'agent.message')
  }

  /** Delivers one stored message; records the outcome on the message. Never throws. */
  async function deliver(msg: MessageRecord, agent: AgentRecord, body: MessageBody): Promise<void> {
    try {
      if (agent.phase !== 'running' || !agent.brokerId || !m.gateway.isConnected(agent.brokerId)) throw new Error(`agent ${agent.name} is not running on a connected broker`)
      if (!m.gateway.capabilities(agent.brokerId)?.includes('messages')) throw new Error('the agent\'s broker cannot deliver messages')
      await m.gateway.request(agent.brokerId, 'agent.message', {agentId: agent.id, text: body.text, plain: body.plain, interruptKey: body.interrupt ? await interruptKeyOf(agent) : undefined}, 15_000)
      await store.messages.setDelivery(msg.id, 'delivered', null, now())
    } catch (err) {
      await store.messages.setDelivery(msg.id, 'failed', (err as Error).message, null).catch(() => {})
    }
  }

  /** A running agent whose broker is connected to no replica: its messages wait (queued). */
  const brokerAway = (agent: AgentRecord) => agent.phase === 'running' && !!agent.brokerId && !m.gateway.isConnected(agent.brokerId)

  async function accept(agent: AgentRecord, sender: Sender, ingress: Ingress, body: MessageBody, broadcastId: string | null, wait: boolean): Promise<string> {
    if (agent.messageMode === 'closed') throw new AppError('message_mode_closed', `agent ${agent.name} does not accept messages (message mode closed)`)
    const away = brokerAway(agent)
    // An interrupt is about the agent's turn now: kept for later it would stop a later turn.
    if (away && body.interrupt && !broadcastId) throw new AppError('broker_unavailable', `the broker of agent ${agent.name} is away; a message with interrupt is not kept for later: send it again when the agent is back`)
    const record: MessageRecord = {
      id: newId(),
      projectId: agent.projectId,
      agentId: agent.id,
      broadcastId,
      sender,
      ingress,
      body: {text: body.text, ...(body.structured && {structured: body.structured}), interrupt: body.interrupt, plain: body.plain},
      delivery: away ? (body.interrupt ? 'failed' : 'queued') : 'pending',
      error: away && body.interrupt ? 'the agent\'s broker was away; a message with interrupt is not kept for later' : null,
      createdAt: now(),
      deliveredAt: null,
    }
    await store.messages.insert(record)
    if (away) return record.id
    const delivery = deliver(record, agent, body)
    if (wait) await delivery
    return record.id
  }

  const senderOf = (ctx: CallContext): Sender => ({kind: ctx.principal.kind, id: ctx.principal.id})

  return {
    refuseRaw,

    /** The two agent message routes: target lookup (404) first, then raw, then authorization. */
    async sendToAgent(ctx: CallContext, target: {ref: string; projectRef?: string}, body: unknown, rawText: string | null, opts: {wait?: boolean} = {}): Promise<{messageId: string; delivery?: 'queued'}> {
      const projectId = target.projectRef ? await projectIdOf(target.projectRef) : undefined
      const agent = target.projectRef && !projectId ? null : await m.access.resolve(target.ref, projectId ?? undefined)
      if (!agent) throw notFound('agent')
      refuseRaw(body, rawText, target.projectRef ? INGRESS.projectAgentMessage : INGRESS.agentMessage, target.projectRef ? PROJECT_KEYS_ROUTE : undefined)
      if (body === undefined) throw new AppError('invalid_request', 'the request body is not valid JSON')
      try {
        await checkMessage(ctx, agent.projectId)
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') throw notFound('agent')
        throw err
      }
      const parsed = parseMessageBody(body)
      const queued = brokerAway(agent)
      const messageId = await accept(agent, senderOf(ctx), target.projectRef ? INGRESS.projectAgentMessage : INGRESS.agentMessage, parsed, null, opts.wait ?? false)
      // Kept for the broker's return: the caller is told it was not delivered yet.
      return queued ? {messageId, delivery: 'queued' as const} : {messageId}
    },

    /** Project broadcast: every running agent of the project whose message mode is open. */
    async broadcast(ctx: CallContext, projectRef: string, body: unknown, rawText: string | null): Promise<{messageId: string; messageIds: string[]}> {
      const projectId = await projectIdOf(projectRef)
      if (!projectId) throw notFound('project')
      refuseRaw(body, rawText, INGRESS.projectBroadcast)
      if (body === undefined) throw new AppError('invalid_request', 'the request body is not valid JSON')
      await checkMessage(ctx, projectId)
      const parsed = parseMessageBody(body)
      const broadcastId = newId()
      const agents = (await store.agents.list({projectIds: [projectId]})).filter((a) => a.phase === 'running' && a.messageMode === 'open')
      const messageIds: string[] = []
      for (const a of agents) messageIds.push(await accept(a, senderOf(ctx), INGRESS.projectBroadcast, parsed, broadcastId, false))
      return {messageId: broadcastId, messageIds}
    },

    /**
     * Message-broker plugin ingress (broker-signed). Raw is refused before the topic is
     * validated and before the sender is resolved. A broker reaches only the agents it runs
     * (others are 404, as for every broker read); a project topic reaches its agents on it.
     */
    async inbound(ctx: CallContext, body: unknown, rawText: string | null, routed: boolean): Promise<{messageId: string; messageIds?: string[]}> {
      refuseRaw(body, rawText, routed ? INGRESS.brokerInboundRouted : INGRESS.brokerInbound)
      if (ctx.principal.kind !== 'broker') throw new AppError('forbidden', 'only a runtime broker (signed request) may use broker ingress')
      if (body === undefined || typeof body !== 'object' || body === null) throw new AppError('invalid_request', 'the request body must be a JSON object')
      const b = body as Record<string, unknown>
      let agents: AgentRecord[]
      let projectId: string
      if (routed) {
        const agent = typeof b.agentId === 'string' ? await store.agents.get(b.agentId) : null
        if (!agent || agent.deletedAt || agent.brokerId !== ctx.principal.id) throw notFound('agent')
        // A projectId, when the plugin gives one, must be the agent's: never deliver across projects.
        if (b.projectId !== undefined && (typeof b.projectId !== 'string' || (await projectIdOf(b.projectId)) !== agent.projectId)) throw notFound('agent')
        agents = [agent]
        projectId = agent.projectId
      } else {
        const topic = typeof b.topic === 'string' ? /^(agent|project)\.([A-Za-z0-9._-]+)$/.exec(b.topic) : null
        if (!topic) throw new AppError('invalid_topic', 'topic must be agent.<agentId> or project.<projectId>')
        if (topic[1] === 'agent') {
          const agent = await store.agents.get(topic[2])
          if (!agent || agent.deletedAt || agent.brokerId !== ctx.principal.id) throw notFound('agent')
          agents = [agent]
          projectId = agent.projectId
        } else {
          const pid = await projectIdOf(topic[2])
          if (!pid) throw notFound('project')
          projectId = pid
          agents = (await store.agents.list({projectIds: [pid], brokerId: ctx.principal.id})).filter((a) => a.phase === 'running' && a.messageMode === 'open')
        }
      }
      const s = b.sender as {kind?: unknown; id?: unknown} | undefined
      const sender = s && typeof s.id === 'string' && (s.kind === 'user' || s.kind === 'agent') ? {kind: s.kind, id: s.id} : null
      const senderOk = sender && (sender.kind === 'user' ? !!(await store.projects.roleOf(projectId, sender.id)) : (await store.agents.get(sender.id))?.projectId === projectId)
      if (!sender || !senderOk) throw new AppError('unknown_sender', 'sender must be {kind: user|agent, id} of the target\'s project')
      const extra = routed ? ['agentId', 'sender', 'projectId'] : ['topic', 'sender']
      const parsed = parseMessageBody(b, extra)
      const ingress = routed ? INGRESS.brokerInboundRouted : INGRESS.brokerInbound
      const broadcastId = agents.length === 1 && (routed || b.topic?.toString().startsWith('agent.')) ? null : newId()
      const ids: string[] = []
      for (const a of agents) ids.push(await accept(a, sender, ingress, parsed, broadcastId, false))
      return broadcastId ? {messageId: broadcastId, messageIds: ids} : {messageId: ids[0]}
    },

    /** A one-off scheduled message (`at`) or a recurring one (`every`), stored for the scheduler. */
    async schedule(ctx: CallContext, projectRef: string, body: unknown, rawText: string | null, kind: 'once' | 'recurring') {
      const projectId = await projectIdOf(projectRef)
      if (!projectId) throw notFound('project')
      refuseRaw(body, rawText, kind === 'once' ? INGRESS.scheduledEvent : INGRESS.schedule)
      if (body === undefined || typeof body !== 'object' || body === null) throw new AppError('invalid_request', 'the request body must be a JSON object')
      await checkMessage(ctx, projectId)
      const b = body as Record<string, unknown>
      const timing = kind === 'once' ? ['agent', 'at'] : ['agent', 'every', 'startAt']
      const parsed = parseMessageBody(b, timing)
      const agent = typeof b.agent === 'string' ? await m.access.resolve(b.agent, projectId) : null
      if (!agent) throw new AppError('validation_error', 'agent must name an agent of the project', {fields: [{path: 'agent', message: 'not an agent of the project'}]})
      const t = clock.now()
      let nextAt: string
      let everyMs: number | null = null
      if (kind === 'once') {
        const at = typeof b.at === 'string' ? Date.parse(b.at) : NaN
        if (Number.isNaN(at)) throw new AppError('validation_error', 'at must be an ISO-8601 time', {fields: [{path: 'at', message: 'not a time'}]})
        nextAt = iso(new Date(at))
      } else {
        everyMs = typeof b.every === 'string' ? parseDuration(b.every) : null
        if (!everyMs || everyMs < 60_000) throw new AppError('validation_error', 'every must be a duration of at least 1m (e.g. 15m, 2h)', {fields: [{path: 'every', message: 'not a duration of 1m or more'}]})
        const start = typeof b.startAt === 'string' ? Date.parse(b.startAt) : t.getTime() + everyMs
        if (Number.isNaN(start)) throw new AppError('validation_error', 'startAt must be an ISO-8601 time', {fields: [{path: 'startAt', message: 'not a time'}]})
        nextAt = iso(new Date(start))
      }
      const record = {
        id: newId(),
        projectId,
        agentId: agent.id,
        kind,
        everyMs,
        nextAt,
        payload: {text: parsed.text, ...(parsed.structured && {structured: parsed.structured}), interrupt: parsed.interrupt, plain: parsed.plain},
        status: 'pending' as const,
        createdBy: senderOf(ctx),
        createdAt: iso(t),
        updatedAt: iso(t),
      }
      await store.messages.insertSchedule(record)
      return record
    },

    async listSchedules(ctx: CallContext, projectRef: string, kind: 'once' | 'recurring') {
      const projectId = await projectIdOf(projectRef)
      if (!projectId) throw notFound('project')
      await m.access.checkProject(ctx, projectId, 'agent.read')
      return (await store.messages.schedules(projectId)).filter((s) => s.kind === kind)
    },

    async cancelSchedule(ctx: CallContext, projectRef: string, id: string) {
      const projectId = await projectIdOf(projectRef)
      if (!projectId) throw notFound('project')
      await checkMessage(ctx, projectId)
      if (!(await store.messages.cancelSchedule(id, now()))) throw notFound('schedule')
    },

    /**
     * Delivers messages kept while their agent's broker was away, once it is connected again
     * (to any replica), oldest first; each is claimed so two replicas never deliver one twice.
     * One whose agent stopped meanwhile fails. The scheduler calls this every second.
     */
    async deliverQueued(): Promise<number> {
      let delivered = 0
      for (const msg of await store.messages.queued()) {
        const agent = await store.agents.get(msg.agentId)
        const gone = !agent || !!agent.deletedAt || agent.phase !== 'running'
        if (!gone && brokerAway(agent)) continue
        if (!(await store.messages.claimQueued(msg.id))) continue
        if (gone) {
          await store.messages.setDelivery(msg.id, 'failed', `agent ${agent?.name ?? msg.agentId} stopped before its broker returned`, null)
          continue
        }
        const b = msg.body as {text: string; structured?: Record<string, unknown>; interrupt?: boolean; plain?: boolean}
        await deliver(msg, agent, {text: b.text, structured: b.structured ?? null, interrupt: false, plain: !!b.plain})
        delivered++
      }
      return delivered
    },

    /** Runs due schedules once (then the queued messages whose broker is back); the scheduler calls this every second. */
    async runDue(): Promise<number> {
      const due = await store.messages.claimDue(now())
      for (const s of due) {
        const agent = await store.agents.get(s.agentId)
        const p = s.payload as {text: string; structured?: Record<string, unknown>; interrupt?: boolean; plain?: boolean}
        if (agent && !agent.deletedAt) {
          await accept(agent, s.createdBy, s.kind === 'once' ? INGRESS.scheduledEvent : INGRESS.schedule, {text: p.text, structured: p.structured ?? null, interrupt: !!p.interrupt, plain: !!p.plain}, null, true).catch((err) =>
            logger.warn({scheduleId: s.id, err: (err as Error).message}, 'scheduled message not accepted'),
          )
        }
        if (s.kind === 'once' || !agent || agent.deletedAt) await store.messages.finishRun(s.id, {status: 'done'}, now())
        else {
          let next = Date.parse(s.nextAt) + s.everyMs!
          if (next <= clock.now().getTime()) next = clock.now().getTime() + s.everyMs!
          await store.messages.finishRun(s.id, {status: 'pending', nextAt: iso(new Date(next))}, now())
        }
      }
      await this.deliverQueued()
      return due.length
    },

    async setMode(ctx: CallContext, ref: string, mode: 'open' | 'closed', projectRef?: string) {
      const projectId = projectRef ? await projectIdOf(projectRef) : undefined
      const agent = projectRef && !projectId ? null : await m.access.resolve(ref, projectId ?? undefined)
      if (!agent) throw notFound('agent')
      await m.access.checkAgent(ctx, agent, 'agent.set_message_mode')
      await store.agents.update(agent.id, {messageMode: mode}, now())
      return {agentId: agent.id, messageMode: mode}
    },

    async history(ctx: CallContext, ref: string, projectRef?: string) {
      const projectId = projectRef ? await projectIdOf(projectRef) : undefined
      const agent = projectRef && !projectId ? null : await m.access.resolve(ref, projectId ?? undefined)
      if (!agent) throw notFound('agent')
      await m.access.checkAgent(ctx, agent, 'agent.read')
      return store.messages.forAgent(agent.id)
    },
  }
}

export type MessagesService = ReturnType<typeof createMessagesService>
