import {AppError} from '../../api/app-error.js'
import type {AgentEventRecord} from '../../store/repositories/agent-events.js'
import type {AgentAccess} from '../agents/access.js'
import {seesApprovalsOf} from '../approvals/approval-authz.js'
import {detailFor} from '../approvals/detail-visibility.js'
import type {CallContext} from '../authz/context.js'
import type {Deps} from '../deps.js'
import type {AgentFeed} from './agent-feed.js'

export interface EventFilter {
  /** Replay events after this seq first (`Last-Event-ID`). */
  after?: number
  /** Only this agent's events (its ID). */
  agentId?: string
  /** Only events of agents of this project (its ID). */
  projectId?: string
}

/** How long a read decision about one project is reused on one stream. */
const DECISION_TTL_MS = 10_000
const REPLAY_PAGE = 500

/**
 * `GET /api/v1/events`: agent events the caller may read, from the replica's feed. Who may read
 * an event is decided as `GET /agents/:id` decides it (agents/access.ts: project roles, a user
 * token's bounds, an agent's delegation walk), per project, cached briefly per stream so a role
 * taken away stops the events within seconds.
 */
export function createEventsService(deps: Deps, o: {feed: AgentFeed; access: AgentAccess}) {
  return {
    /**
     * Calls `send` with each readable event, first those after `filter.after` from the log, then
     * live ones, each once and in order of the log's sequence per replay and live phase.
     * Returns an unsubscribe.
     */
    async subscribe(ctx: CallContext, filter: EventFilter, send: (e: AgentEventRecord) => void): Promise<() => void> {
      if (ctx.principal.kind === 'broker') throw new AppError('forbidden', 'brokers do not read agent events')
      const decisions = new Map<string, {allowed: boolean; at: number}>()
      const mayRead = async (e: AgentEventRecord): Promise<boolean> => {
        if (filter.agentId && e.agentId !== filter.agentId) return false
        if (filter.projectId && e.projectId !== filter.projectId) return false
        const p = ctx.principal
        // An agent reading itself needs no walk (as GET /agents/:id).
        if (p.kind === 'agent' && p.id === e.agentId) return true
        // An approval (its input may hold secrets) reaches no other agent but the agent's parent.
        if (e.approval && p.kind === 'agent') {
          const agent = await deps.store.agents.get(e.agentId)
          if (!agent || !seesApprovalsOf(p, {id: agent.id, parentId: agent.parent?.id ?? null})) return false
        }
        const hit = decisions.get(e.projectId)
        if (hit && Date.now() - hit.at < DECISION_TTL_MS) return hit.allowed
        const allowed = await o.access.checkProject(ctx, e.projectId, 'agent.read').then(
          () => true,
          () => false,
        )
        decisions.set(e.projectId, {allowed, at: Date.now()})
        return allowed
      }
      // Another agent reads only the label of an agent's detail (detail-visibility.ts), which needs
      // the agent's parent: fixed at its creation, so read once per agent and stream.
      const parents = new Map<string, string | null>()
      const shown = async (e: AgentEventRecord): Promise<AgentEventRecord> => {
        const p = ctx.principal
        if (p.kind !== 'agent' || p.id === e.agentId || !e.detail) return e
        let parentId = parents.get(e.agentId)
        if (parentId === undefined) {
          parentId = (await deps.store.agents.get(e.agentId))?.parent?.id ?? null
          if (parents.size >= 10_000) parents.clear()
          parents.set(e.agentId, parentId)
        }
        const detail = detailFor(p, {id: e.agentId, parentId}, e.detail)
        return detail === e.detail ? e : {...e, detail}
      }
      // Live events queue behind one promise chain, so a slow decision never reorders them.
      let chain: Promise<void> = Promise.resolve()
      let closed = false
      const replayed = new Set<number>()
      let replaying = filter.after !== undefined
      const buffered: AgentEventRecord[] = []
      const deliver = (e: AgentEventRecord, replay = false) => {
        chain = chain.then(async () => {
          if (closed || (!replay && replayed.has(e.seq))) return
          if (!(await mayRead(e).catch(() => false))) return
          const visible = await shown(e).catch(() => null)
          if (visible && !closed) send(visible)
        })
      }
      const unsubscribe = o.feed.subscribe((e) => (replaying ? buffered.push(e) : deliver(e)))
      if (filter.after !== undefined) {
        let after = filter.after
        for (;;) {
          const page = await deps.store.agentEvents.since(after, REPLAY_PAGE)
          for (const e of page) {
            replayed.add(e.seq)
            deliver(e, true)
          }
          if (page.length < REPLAY_PAGE) break
          after = page[page.length - 1].seq
        }
        replaying = false
        for (const e of buffered.splice(0)) deliver(e)
      }
      return () => {
        closed = true
        unsubscribe()
      }
    },
  }
}

export type EventsService = ReturnType<typeof createEventsService>
