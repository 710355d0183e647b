import {AppError, notFound} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {CallContext} from '../authz/context.js'
import {decideProject, enforce} from '../authz/decide.js'
import type {Permission, ProjectRole} from '../authz/permissions.js'
import type {Deps} from '../deps.js'
import {createWalkGuard} from '../delegation/walk-guard.js'
import {SCOPE} from './scopes.js'

/**
 * Who may do what to agents. Users: their project role (or system admin, bounded by a user
 * access token). Agents: only inside their own project; reading needs no scope, lifecycle
 * actions on other agents need `ScopeAgentLifecycle`; every agent permission also walks the
 * agent's delegation chain (delegation/walk.ts). Brokers: only agents they host.
 * A caller who may not read the agent gets 404.
 */
/**
 * A user owns the agents it created. Through a user access token, ownership counts only inside
 * the token's project and when the token carries `agent.lifecycle` (a read-only token of the
 * owner must not drive the agent's terminal).
 */
export function ownsAgent(ctx: CallContext, agent: AgentRecord): boolean {
  const p = ctx.principal
  if (p.kind !== 'user' || agent.createdBy.kind !== 'user' || agent.createdBy.id !== p.id) return false
  return !ctx.bounds || (ctx.bounds.projectId === agent.projectId && ctx.bounds.permissions.has('agent.lifecycle'))
}

/** The start of an agent ID: 8 to 35 of its characters (a whole ID is 36). */
const ID_PREFIX = /^[0-9a-f]{8}[0-9a-f-]{0,27}$/i

export function createAgentAccess(deps: Deps) {
  const {store} = deps
  const walk = createWalkGuard(deps)

  async function userRole(ctx: CallContext, projectId: string): Promise<ProjectRole | null> {
    return ctx.principal.kind === 'user' ? ((await store.projects.roleOf(projectId, ctx.principal.id)) as ProjectRole | null) : null
  }

  return {
    /** The delegation walk, for checks of agent principals outside this file (keys, messages). */
    walk,

    /** Throws unless the caller may use `permission` on agents of `projectId`. */
    async checkProject(ctx: CallContext, projectId: string, permission: Permission): Promise<void> {
      const p = ctx.principal
      if (p.kind === 'agent') {
        if (p.projectId !== projectId) throw notFound('project')
        if (permission !== 'agent.read' && permission !== 'agent.list' && !ctx.scopes?.has(SCOPE.lifecycle)) {
          throw new AppError('forbidden', `this agent's token lacks ${SCOPE.lifecycle}`, {permission})
        }
        await walk.require(ctx, permission, {message: `not allowed: ${permission} on project`})
        return
      }
      if (p.kind === 'broker') throw new AppError('forbidden', 'brokers cannot do this')
      const role = await userRole(ctx, projectId)
      const canSee = decideProject(ctx, projectId, role, 'project.read').allowed
      enforce(decideProject(ctx, projectId, role, permission), {canSee, what: 'project', permission})
    },

    async checkAgent(ctx: CallContext, agent: AgentRecord, permission: Permission): Promise<void> {
      const p = ctx.principal
      if (p.kind === 'broker') {
        if (agent.brokerId !== p.id) throw notFound('agent')
        return
      }
      // An agent reading or reporting on itself is self-maintenance, not delegated authority:
      // no walk, so liveness never depends on its ancestors (docs/delegation.md).
      if (p.kind === 'agent' && p.id === agent.id && (permission === 'agent.read' || permission === 'agent.status_update')) return
      // Attach (and keys, authorized like it): the agent's owner may, without agent.attach.
      if (permission === 'agent.attach' && ownsAgent(ctx, agent)) {
        await this.checkProject(ctx, agent.projectId, 'agent.read').catch(() => {
          throw notFound('agent')
        })
        return
      }
      try {
        await this.checkProject(ctx, agent.projectId, permission)
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') throw notFound('agent')
        throw err
      }
    },

    /** Project IDs whose agents the caller may list (null: all, for a system admin). */
    async visibleProjects(ctx: CallContext): Promise<string[] | null> {
      const p = ctx.principal
      if (p.kind === 'agent') return (await walk.decide(ctx, 'agent.list')).allowed ? [p.projectId] : []
      if (p.kind === 'broker') return []
      if (ctx.bounds) return ctx.bounds.permissions.has('agent.list') ? [ctx.bounds.projectId] : []
      if (p.systemAdmin) return null
      const rows = await store.projects.list({userId: p.id, membersOnly: true})
      return rows.map((r) => r.id)
    },

    /**
     * The live agent a reference names: its ID; else its name in `projectId`; else a unique
     * prefix of 8 or more characters of its ID (CONTRACT.md: agent IDs), among the agents of
     * `projectId` first, then of every project (as an ID names an agent whatever the current
     * project). A name wins over a prefix it looks like. A prefix two agents share is refused
     * with `ambiguous_agent`; who may see the agent found is decided after, as for an ID.
     */
    async resolve(idOrName: string, projectId?: string): Promise<AgentRecord | null> {
      const byId = await store.agents.get(idOrName)
      if (byId && !byId.deletedAt && (!projectId || byId.projectId === projectId)) return byId
      const byName = projectId ? await store.agents.getByName(projectId, idOrName) : null
      if (byName || !ID_PREFIX.test(idOrName)) return byName
      const prefix = idOrName.toLowerCase()
      let found = projectId ? await store.agents.byIdPrefix(prefix, projectId) : []
      if (found.length === 0) found = await store.agents.byIdPrefix(prefix)
      if (found.length > 1) throw new AppError('ambiguous_agent', `${idOrName} is the start of more than one agent's ID: give more of it`, {prefix: idOrName})
      return found[0] ?? null
    },
  }
}

export type AgentAccess = ReturnType<typeof createAgentAccess>
