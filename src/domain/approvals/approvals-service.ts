import {AppError, notFound} from '../../api/app-error.js'
import {APPROVAL_STATES, type ApprovalDecider, type ApprovalDto, type ApprovalState} from '../../api/approval.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import {ownsAgent, type AgentAccess} from '../agents/access.js'
import type {createStatusWriter} from '../agents/status-writer.js'
import type {CallContext} from '../authz/context.js'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import {decideApprover, seesApprovalsOf} from './approval-authz.js'
import {createApprovalWaits} from './approval-waits.js'
import {ruleDecision, type ApprovalRule} from './rules.js'

/** What a harness's hook asks (`POST /api/v1/agents/:id/approvals`). */
export interface ApprovalRequestInput {
  tool: string
  summary?: string
  input?: unknown
  /** How long the hook waits for a decision before its harness's own dialog is the only way (seconds). */
  waitSeconds?: number
}

/** Bounds of what a request may hold: the summary is what a person reads on a phone. */
const SUMMARY_MAX = 2000
const INPUT_MAX = 64 * 1024
const WAIT_DEFAULT_S = 600
const WAIT_MAX_S = 24 * 3600
/** One long-poll (`GET /approvals/:id?wait=`) holds at most this long; the hook asks again. */
export const POLL_MAX_S = 30
/** Reports of these activities mean the harness went on: its dialog was answered at the terminal (`settle`). */
export const SETTLED_BY: ReadonlySet<string> = new Set(['thinking', 'idle', 'completed'])

const fieldError = (path: string, message: string) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}]})
const oneLine = (s: string, max: number) => {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

export interface ApprovalsOptions {
  access: AgentAccess
  status: ReturnType<typeof createStatusWriter>
  /** `approvals.rules` as configured now. */
  rules: () => (ApprovalRule | null)[]
  /** The harness type an agent runs (its harness config's `harness`). */
  harnessOf: (agent: AgentRecord) => Promise<string>
}

/**
 * Approvals: a harness's permission requests held on the Hub (CONTRACT "Approvals"). The agent's
 * hook creates one and waits on it (long-poll); a person, the agent's parent or a rule decides;
 * the terminal's answer or the hook's deadline ends it otherwise. Every change of state is one
 * conditional write (repositories/approvals.ts), so exactly one of racing answers wins and every
 * refusal changes nothing.
 */
export function createApprovalsService(deps: Deps, o: ApprovalsOptions) {
  const {store, clock} = deps
  const waits = createApprovalWaits(deps)
  const now = () => iso(clock.now())

  async function agentOf(a: ApprovalDto): Promise<AgentRecord> {
    const agent = await store.agents.get(a.agentId)
    if (!agent) throw notFound('approval')
    return agent
  }

  /** Throws 404 unless the caller may read the approval's agent. */
  async function mayRead(ctx: CallContext, agent: AgentRecord): Promise<void> {
    if (ctx.principal.kind === 'agent' && ctx.principal.id === agent.id) return
    await o.access.checkAgent(ctx, agent, 'agent.read').catch((err) => {
      throw err instanceof AppError && err.code === 'not_found' ? notFound('approval') : err
    })
  }

  const sees = (ctx: CallContext, agent: AgentRecord) => seesApprovalsOf(ctx.principal, {id: agent.id, parentId: agent.parent?.id ?? null})

  /** Throws 404 unless the caller may see the approval itself (its input): approval-authz.ts. */
  async function maySee(ctx: CallContext, agent: AgentRecord): Promise<void> {
    await mayRead(ctx, agent)
    if (!sees(ctx, agent)) throw notFound('approval')
  }

  async function holdsLifecycle(ctx: CallContext, projectId: string): Promise<boolean> {
    if (ctx.principal.kind !== 'user') return false
    return o.access.checkProject(ctx, projectId, 'agent.lifecycle').then(
      () => true,
      () => false,
    )
  }

  async function mayDecide(ctx: CallContext, agent: AgentRecord, lifecycle?: boolean): Promise<ReturnType<typeof decideApprover>> {
    return decideApprover({
      principal: ctx.principal,
      agent: {id: agent.id, parentId: agent.parent?.id ?? null},
      owner: ownsAgent(ctx, agent),
      lifecycle: lifecycle ?? (await holdsLifecycle(ctx, agent.projectId)),
    })
  }

  /** The approval as it is now: a pending one past its deadline is expired first. */
  async function current(id: string): Promise<ApprovalDto | null> {
    const a = await store.approvals.get(id)
    if (a?.state === 'pending' && a.expiresAt <= now()) {
      if ((await store.approvals.expireDue(now(), {id})).length) waits.wake([id])
      return store.approvals.get(id)
    }
    return a
  }

  async function audit(ctx: CallContext, a: ApprovalDto) {
    await store.audit.insert({
      id: newId(),
      kind: 'approval_decision',
      actor: {kind: ctx.principal.kind, id: ctx.principal.id},
      projectId: a.projectId,
      target: a.agentId,
      details: {approval: a.id, tool: a.tool, summary: a.summary.slice(0, 200), state: a.state, reason: a.reason, credentialKind: ctx.credentialKind},
      at: a.decidedAt ?? now(),
    })
  }

  const refusal = (a: ApprovalDto) =>
    a.state === 'expired'
      ? new AppError('approval_expired', `approval ${a.id} expired: its harness stopped waiting and asks at its terminal`, {state: a.state})
      : new AppError('already_decided', `approval ${a.id} is already ${a.state}`, {state: a.state, decidedBy: a.decidedBy})

  return {
    /**
     * A harness's permission request, from its own agent only (a hook with the agent's token):
     * decided at once by a matching rule, else held `pending` with the agent `waiting_for_input`
     * and an `approval_requested` event.
     */
    async request(ctx: CallContext, agentId: string, input: ApprovalRequestInput): Promise<ApprovalDto> {
      const p = ctx.principal
      if (p.kind !== 'agent') throw new AppError('forbidden', "approvals are asked by an agent's own harness (its hook, with the agent's token)")
      if (p.id !== agentId) throw new AppError('forbidden', 'an agent asks approvals only for itself')
      const agent = await store.agents.get(agentId)
      if (!agent || agent.deletedAt) throw notFound('agent')
      if (agent.phase !== 'running') throw new AppError('agent_not_running', `agent ${agent.name} is not running (phase ${agent.phase})`, {phase: agent.phase})
      const tool = oneLine(input.tool, 200)
      if (!tool) throw fieldError('tool', 'must not be empty')
      const inputJson = JSON.stringify(input.input ?? null)
      if (inputJson.length > INPUT_MAX) throw fieldError('input', `must be at most ${INPUT_MAX} bytes as JSON`)
      const summary = oneLine(input.summary ?? '', SUMMARY_MAX)
      const waitS = Math.min(Math.max(Math.round(input.waitSeconds ?? WAIT_DEFAULT_S), 1), WAIT_MAX_S)
      const at = clock.now()
      const base: ApprovalDto = {
        id: newId(),
        agentId: agent.id,
        agentName: agent.name,
        projectId: agent.projectId,
        tool,
        summary,
        input: input.input ?? null,
        state: 'pending',
        createdAt: iso(at),
        expiresAt: iso(new Date(at.getTime() + waitS * 1000)),
        decidedBy: null,
        decidedAt: null,
        reason: null,
      }
      // Rules judge the command as the harness sent it, not the one-lined display text: a newline
      // made a space would let `npm test*` allow `npm test\nrm -rf /` (rules.ts never lets an
      // allow glob match a newline, nor the … of a cut summary).
      const raw = typeof input.summary === 'string' ? input.summary : ''
      const rule = ruleDecision(o.rules(), {harness: await o.harnessOf(agent), tool, summary: raw.length > SUMMARY_MAX ? summary : raw})
      if (rule) {
        const decided: ApprovalDto = {...base, state: rule.decision === 'allow' ? 'allowed' : 'denied', decidedBy: {kind: 'rule', index: rule.index}, decidedAt: base.createdAt, reason: rule.decision === 'deny' ? `denied by rule ${rule.index} of approvals.rules` : null}
        await store.approvals.insert(decided, null)
        return decided
      }
      const detail = oneLine(`Permission: ${summary ? `${tool}: ${summary}` : tool}`, 200)
      // The approval first: whoever sees the agent waiting (svc agent wait --for input) finds it.
      await store.transaction((tx) => tx.approvals.insert(base, {phase: agent.phase, detail, error: agent.error}))
      await o.status.report(agent.id, {activity: 'waiting_for_input', detail}, {liveOnly: true})
      return base
    },

    /** One approval; with `waitSeconds`, held while it is pending (at most POLL_MAX_S) so a hook learns its decision at once. */
    async get(ctx: CallContext, id: string, waitSeconds = 0): Promise<ApprovalDto> {
      let a = await store.approvals.get(id)
      if (!a) throw notFound('approval')
      await maySee(ctx, await agentOf(a))
      const until = Date.now() + Math.min(Math.max(waitSeconds, 0), POLL_MAX_S) * 1000
      for (;;) {
        // Subscribed before the read, so a decision between the two is not missed.
        const woken = waits.next(id)
        try {
          a = (await current(id))!
          const left = Math.min(until - Date.now(), Date.parse(a.expiresAt) - clock.now().getTime() + 50)
          if (a.state !== 'pending' || left <= 0) return a
          await woken.wait(left)
        } finally {
          woken.cancel()
        }
      }
    },

    /** `POST /approvals/:id/decision`: allow or deny, by whom CONTRACT "Approvals" says; audited. */
    async decide(ctx: CallContext, id: string, input: {decision?: unknown; reason?: unknown}): Promise<ApprovalDto> {
      if (input.decision !== 'allow' && input.decision !== 'deny') throw fieldError('decision', 'must be one of: allow, deny')
      if (input.reason !== undefined && (typeof input.reason !== 'string' || input.reason.length > 2000)) throw fieldError('reason', 'must be a string of at most 2000 characters')
      const found = await store.approvals.get(id)
      if (!found) throw notFound('approval')
      const agent = await agentOf(found)
      // Who reads the agent learns here only that it may not decide (403): nothing of the approval.
      await mayRead(ctx, agent)
      const allowed = await mayDecide(ctx, agent)
      if (!allowed.allowed) {
        const why = allowed.reason === 'own_approval' ? 'no agent decides its own approvals' : 'only a person who owns the agent or holds agent.lifecycle in its project, or its parent agent, decides its approvals'
        throw new AppError('forbidden', why, {reason: allowed.reason})
      }
      const before = await current(id)
      if (!before || before.state !== 'pending') throw refusal(before ?? found)
      const decidedBy: ApprovalDecider = ctx.principal.kind === 'agent' ? {kind: 'agent', id: ctx.principal.id} : {kind: 'user', id: ctx.principal.id}
      const reason = typeof input.reason === 'string' && input.reason.trim() ? input.reason.trim() : null
      const decided = await store.approvals.decide(id, {state: input.decision === 'allow' ? 'allowed' : 'denied', decidedBy, at: now(), reason})
      if (!decided) throw refusal((await current(id)) ?? found)
      waits.wake([id])
      await audit(ctx, decided)
      deps.logger.info({approval: id, agentId: agent.id, by: ctx.principal.id, state: decided.state}, 'approval decided')
      return decided
    },

    /**
     * What the caller may decide (CONTRACT: `GET /api/v1/approvals`): a person's, in the projects
     * it sees, those of agents it owns or whose project it holds `agent.lifecycle` in; an agent's,
     * those of its children.
     */
    async list(ctx: CallContext, state?: string): Promise<ApprovalDto[]> {
      const s = stateOf(state)
      const p = ctx.principal
      if (p.kind === 'broker') throw new AppError('forbidden', 'brokers do not decide approvals')
      if (p.kind === 'agent') {
        await store.approvals.expireDue(now(), {projectIds: [p.projectId]})
        return store.approvals.list({state: s, parentId: p.id})
      }
      const projectIds = await o.access.visibleProjects(ctx)
      await store.approvals.expireDue(now(), {projectIds})
      const rows = await store.approvals.list({state: s, projectIds})
      const lifecycle = new Map<string, boolean>()
      const agents = new Map<string, AgentRecord | null>()
      const out: ApprovalDto[] = []
      for (const a of rows) {
        if (!lifecycle.has(a.projectId)) lifecycle.set(a.projectId, await holdsLifecycle(ctx, a.projectId))
        if (!agents.has(a.agentId)) agents.set(a.agentId, await store.agents.get(a.agentId))
        const agent = agents.get(a.agentId)
        if (agent && (await mayDecide(ctx, agent, lifecycle.get(a.projectId))).allowed) out.push(a)
      }
      return out
    },

    /** `GET /agents/:id/approvals`: an agent's approvals, oldest first, for whoever may read it. */
    async listForAgent(ctx: CallContext, ref: string, opts: {state?: string; projectRef?: string} = {}): Promise<ApprovalDto[]> {
      const s = stateOf(opts.state)
      let projectId: string | undefined
      if (opts.projectRef) {
        const project = (await store.projects.get(opts.projectRef)) ?? (await store.projects.getBySlug(opts.projectRef))
        if (!project) throw notFound('project')
        projectId = project.id
      }
      const agent = await o.access.resolve(ref, projectId)
      if (!agent) throw notFound('agent')
      if (!(ctx.principal.kind === 'agent' && ctx.principal.id === agent.id)) await o.access.checkAgent(ctx, agent, 'agent.read')
      // Another agent that reads this one (a sibling) sees no approvals of it: the agent's pages
      // and `svc agent wait --for input` keep working for it, with nothing to show.
      if (!sees(ctx, agent)) return []
      await store.approvals.expireDue(now(), {agentId: agent.id})
      return store.approvals.list({agentId: agent.id, state: s})
    },

    /**
     * After a status report of the agent in one of SETTLED_BY (the status writer's
     * `settleApprovals`): a harness that went on answered its dialog at the terminal, so what is
     * still pending is `answered` and its hook stops.
     */
    async settle(agentId: string): Promise<void> {
      const ids = await store.approvals.answerPending(agentId, now())
      if (ids.length) waits.wake(ids)
    },

    close: () => waits.close(),
  }
}

function stateOf(state: string | undefined): ApprovalState | undefined {
  if (state === undefined || state === '') return undefined
  if (!(APPROVAL_STATES as readonly string[]).includes(state)) throw fieldError('state', `must be one of: ${APPROVAL_STATES.join(', ')}`)
  return state as ApprovalState
}

export type ApprovalsService = ReturnType<typeof createApprovalsService>
