import {AppError, notFound} from '../../api/app-error.js'
import type {SecretScope} from '../../store/repositories/project-secrets.js'
import type {CallContext} from '../authz/context.js'
import {decideProject, enforce} from '../authz/decide.js'
import type {ProjectRole} from '../authz/permissions.js'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'
import {createWalkGuard} from '../delegation/walk-guard.js'
import {openSealed, seal} from './sealing.js'

export interface SecretView {
  key: string
  scope: SecretScope
  /** The user a user-scope secret belongs to. */
  userId: string | null
  writtenBy: {kind: string; id: string}
  updatedAt: string
}

const KEY_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/

/**
 * Project and user secrets (`/api/v1/projects/:id/secrets`). Values are encrypted at rest and
 * never returned by the API (list shows keys, scope, writer and time only); agents receive them
 * at dispatch. Users: listing needs `project.secret_read` (owners, admins), writing project
 * scope `project.update` (owners, admins), user scope any reader of the project. Agents: their
 * own project only, holding `project.secret_read` (list) or `secret.use` (write, delete) along
 * their delegation chain; while `agent_secrets.user_scope_only` is on, an agent's project-scope
 * write (an empty scope counts as project) is 403 `secret_scope_restricted`; an agent's
 * user-scope secret belongs to the user who created it.
 */
export function createSecretsService(deps: Deps, o: {key: () => Buffer; userScopeOnly: () => boolean}) {
  const {store} = deps
  const walk = createWalkGuard(deps)
  const aad = (projectId: string, scope: string, userId: string, key: string) => `${projectId}/${scope}/${userId}/${key}`

  async function resolve(ctx: CallContext, idOrSlug: string, write: SecretScope | null) {
    const project = (await store.projects.get(idOrSlug)) ?? (await store.projects.getBySlug(idOrSlug))
    if (!project) throw notFound('project')
    const p = ctx.principal
    if (p.kind === 'agent') {
      if (p.projectId !== project.id) throw notFound('project')
      // Provenance-requiring permissions: listing reads the project's secrets, writing uses them.
      const permission = write === null ? 'project.secret_read' : 'secret.use'
      await walk.require(ctx, permission, {message: `not allowed: ${permission} on project`})
      const agent = await store.agents.get(p.id)
      const owner = agent?.createdBy.kind === 'user' ? agent.createdBy.id : null
      return {project, userId: owner}
    }
    if (p.kind !== 'user') throw new AppError('forbidden', 'only users and agents manage project secrets')
    const role = (await store.projects.roleOf(project.id, p.id)) as ProjectRole | null
    const canSee = decideProject(ctx, project.id, role, 'project.read').allowed
    // Listing names every project secret: `project.secret_read` (owners, admins; a token must
    // carry it). Writing project scope needs `project.update`; the caller's own user scope, read access.
    const permission = write === null ? 'project.secret_read' : write === 'project' ? 'project.update' : 'project.read'
    enforce(decideProject(ctx, project.id, role, permission), {canSee, what: 'project', permission})
    return {project, userId: p.id}
  }

  const view = (r: {key: string; scope: SecretScope; userId: string; writtenBy: {kind: string; id: string}; updatedAt: string}): SecretView => ({
    key: r.key,
    scope: r.scope,
    userId: r.scope === 'user' ? r.userId : null,
    writtenBy: r.writtenBy,
    updatedAt: r.updatedAt,
  })

  const scopeOf = (raw: unknown): SecretScope => {
    if (raw === undefined || raw === null || raw === '' || raw === 'project') return 'project'
    if (raw === 'user') return 'user'
    throw new AppError('validation_error', 'scope: expected "project" or "user"', {fields: [{path: 'scope', message: 'must be project or user'}]})
  }

  return {
    /**
     * Secret values to deliver to an agent of `projectId` started for `userId`: project-scope
     * secrets, the user's own over them; only `keys` when given. Decrypted here and nowhere else;
     * callers pass them to the broker and never log them.
     */
    async valuesFor(projectId: string, userId: string | null, keys?: string[]): Promise<Record<string, string>> {
      const wanted = keys ? new Set(keys) : null
      const out: Record<string, string> = {}
      const rows = (await store.projectSecrets.list(projectId, userId)).filter((r) => !wanted || wanted.has(r.key))
      // Project scope first, so the user's own value of the same key wins.
      for (const r of [...rows.filter((r) => r.scope === 'project'), ...rows.filter((r) => r.scope === 'user')]) {
        out[r.key] = openSealed(o.key(), aad(r.projectId, r.scope, r.userId, r.key), r.valueEnc)
      }
      return out
    },

    async list(ctx: CallContext, projectId: string): Promise<SecretView[]> {
      const {project, userId} = await resolve(ctx, projectId, null)
      return (await store.projectSecrets.list(project.id, userId)).map(view)
    },
    async put(ctx: CallContext, projectId: string, key: string, body: {value: string; scope?: string}): Promise<SecretView> {
      if (!KEY_RE.test(key)) throw new AppError('validation_error', `invalid secret key "${key}"`, {fields: [{path: 'key', message: 'letters, digits, _ . -'}]})
      const scope = scopeOf(body.scope)
      if (ctx.principal.kind === 'agent' && scope === 'project' && o.userScopeOnly()) {
        throw new AppError('secret_scope_restricted', 'agents may write only user-scope secrets on this Hub (agent_secrets.user_scope_only); send scope "user"', {scope: 'project'})
      }
      const {project, userId} = await resolve(ctx, projectId, scope)
      if (scope === 'user' && !userId) throw new AppError('forbidden', 'this agent has no user to hold a user-scope secret')
      const uid = scope === 'user' ? userId! : ''
      const row = {projectId: project.id, scope, userId: uid, key, valueEnc: seal(o.key(), aad(project.id, scope, uid, key), body.value), writtenBy: {kind: ctx.principal.kind, id: ctx.principal.id}, updatedAt: iso(deps.clock.now())}
      await store.projectSecrets.put(row)
      return view(row)
    },
    async remove(ctx: CallContext, projectId: string, key: string, rawScope?: string): Promise<{deleted: true}> {
      const scope = scopeOf(rawScope)
      if (ctx.principal.kind === 'agent' && scope === 'project' && o.userScopeOnly()) {
        throw new AppError('secret_scope_restricted', 'agents may change only user-scope secrets on this Hub (agent_secrets.user_scope_only)', {scope: 'project'})
      }
      const {project, userId} = await resolve(ctx, projectId, scope)
      if (!(await store.projectSecrets.delete(project.id, scope, scope === 'user' ? (userId ?? '') : '', key))) throw notFound('secret')
      return {deleted: true}
    },
  }
}

export type SecretsService = ReturnType<typeof createSecretsService>
