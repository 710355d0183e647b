import {AppError, notFound} from '../../api/app-error.js'
import type {Member, Project} from '../../store/repositories/projects.js'
import type {CallContext} from '../authz/context.js'
import {decideProject, enforce} from '../authz/decide.js'
import {PROJECT_ROLES, type Permission, type ProjectRole} from '../authz/permissions.js'
import {iso} from '../shared/clock.js'
import {checkoutRoot} from '../../broker/workspace/repository.js'
import {newId} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import {SCOPE} from '../agents/scopes.js'
import {createWalkGuard} from '../delegation/walk-guard.js'
import {cloneUrlOf} from './clone-url.js'
import {normalizeGitRemote, slugify} from './git-remote.js'

export interface ProjectView extends Project {
  /** The caller's membership role, null for a system admin who is not a member. */
  role: ProjectRole | null
}

export interface ProjectStats {
  members: number
  [k: string]: number
}

/** Contributes counts to a project's statistics (the agents issue adds agent counts). */
export type StatsContributor = (projectId: string) => Promise<Record<string, number>>

const fieldError = (path: string, message: string) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}]})

export function createProjectsService(deps: Deps, statsContributors: StatsContributor[] = []) {
  const {store, clock} = deps
  const now = () => iso(clock.now())
  const walk = createWalkGuard(deps)

  async function find(idOrSlug: string): Promise<Project | null> {
    return (await store.projects.get(idOrSlug)) ?? (await store.projects.getBySlug(idOrSlug))
  }

  async function roleOf(ctx: CallContext, projectId: string): Promise<ProjectRole | null> {
    if (ctx.principal.kind !== 'user') return null
    return (await store.projects.roleOf(projectId, ctx.principal.id)) as ProjectRole | null
  }

  /**
   * Loads a project the caller may act on. Anyone who may not read it gets 404 (as if it did
   * not exist); readers without `permission` get 403.
   */
  async function load(ctx: CallContext, idOrSlug: string, permission: Permission): Promise<ProjectView> {
    const project = await find(idOrSlug)
    if (!project) throw notFound('project')
    if (ctx.principal.kind === 'agent') return loadForAgent(ctx, project, permission)
    const role = await roleOf(ctx, project.id)
    const canSee = decideProject(ctx, project.id, role, 'project.read').allowed
    enforce(decideProject(ctx, project.id, role, permission), {canSee, what: 'project', permission})
    return {...project, role}
  }

  /**
   * An agent reads its own project (so `svc project get` works inside it) when its token holds
   * the project read scope and its delegation chain carries `project.read`; it never writes one.
   * Any other project, or no read scope, is 404 as if it did not exist.
   */
  async function loadForAgent(ctx: CallContext, project: Project, permission: Permission): Promise<ProjectView> {
    if (ctx.principal.kind !== 'agent' || ctx.principal.projectId !== project.id || !ctx.scopes?.has(SCOPE.projectRead)) throw notFound('project')
    await walk.require(ctx, 'project.read', {code: 'not_found', message: 'project not found'})
    if (permission !== 'project.read') throw new AppError('forbidden', `not allowed: ${permission} on project`, {permission, reason: 'principal_not_user'})
    return {...project, role: null}
  }

  async function uniqueSlug(name: string): Promise<string> {
    const base = slugify(name)
    for (let i = 1; ; i++) {
      const candidate = i === 1 ? base : `${base}-${i}`
      if (!(await store.projects.slugExists(candidate))) return candidate
    }
  }

  function requireUser(ctx: CallContext) {
    if (ctx.principal.kind !== 'user') throw new AppError('forbidden', 'only users may do this')
    return ctx.principal
  }

  return {
    load,

    /**
     * A workstation Hub's `default` project, owned by the dev user, so agents can be created
     * before anything is registered. Idempotent.
     */
    async ensureDefault(ownerId: string): Promise<void> {
      if (await store.projects.getBySlug('default')) return
      const t = now()
      const project: Project = {id: newId(), name: 'default', slug: 'default', gitRemote: null, localPath: null, description: 'Created by the workstation Hub for agents outside a registered project.', defaultBrokerId: null, createdBy: ownerId, createdAt: t, updatedAt: t}
      try {
        await store.transaction(async (tx) => {
          await tx.projects.insert(project)
          await tx.projects.setMember(project.id, ownerId, 'owner', t)
        })
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'conflict')) throw err
      }
    },

    /** Projects the caller may read: all of them for a system admin, else its memberships. */
    async list(ctx: CallContext): Promise<ProjectView[]> {
      const user = requireUser(ctx)
      const rows = await store.projects.list({userId: user.id, membersOnly: !user.systemAdmin, onlyId: ctx.bounds?.projectId})
      return rows
        .map((p) => ({...p, role: p.role as ProjectRole | null}))
        .filter((p) => decideProject(ctx, p.id, p.role, 'project.read').allowed)
    },

    /**
     * Registers a project, or links to the one already registered for the same git remote
     * (idempotent on the normalised remote). A remote registered to a project the caller cannot
     * read is a 409 `project_exists`.
     */
    async register(ctx: CallContext, input: {name: string; gitRemote?: string | null; description?: string; localPath?: string | null}): Promise<{project: ProjectView; created: boolean}> {
      const user = requireUser(ctx)
      const name = input.name.trim()
      if (!name) throw fieldError('name', 'must not be empty')
      // The checkout is on this Hub's machine (its co-located broker's): checked here, stored as its top.
      let localPath: string | null = null
      if (input.localPath) {
        localPath = await checkoutRoot(input.localPath)
        if (!localPath) throw new AppError('checkout_invalid', `${input.localPath} is not a git checkout on the Hub's machine (localPath must be the absolute path of one)`, {localPath: input.localPath})
      }
      let remote: string | null = null
      let cloneUrl: string | null = null
      if (input.gitRemote) {
        remote = normalizeGitRemote(input.gitRemote)
        if (!remote) throw fieldError('gitRemote', `is not a git remote: "${input.gitRemote}"`)
        cloneUrl = cloneUrlOf(input.gitRemote)
      }
      const link = async (): Promise<{project: ProjectView; created: boolean} | null> => {
        const existing = remote ? await store.projects.getByRemote(remote) : localPath ? await store.projects.getByLocalPath(localPath) : null
        if (!existing) return null
        const role = await roleOf(ctx, existing.id)
        if (!decideProject(ctx, existing.id, role, 'project.read').allowed) {
          throw new AppError('project_exists', 'a project is already registered for this git remote; ask its owner to add you', {gitRemote: remote})
        }
        // Linking records what the project lacks (a member's own checkout; the URL to clone of a
        // project registered before svc kept it), when the caller may update the project.
        const fill = {...(localPath && !existing.localPath && {localPath}), ...(cloneUrl && !existing.cloneUrl && {cloneUrl})}
        if (Object.keys(fill).length && decideProject(ctx, existing.id, role, 'project.update').allowed) {
          const updated = await store.projects.update(existing.id, fill, now())
          if (updated) return {project: {...updated, role}, created: false}
        }
        return {project: {...existing, role}, created: false}
      }
      const linked = await link()
      if (linked) return linked
      if (ctx.bounds) throw new AppError('forbidden', 'a user access token cannot create projects')

      const t = now()
      const project: Project = {id: newId(), name, slug: await uniqueSlug(name), gitRemote: remote, cloneUrl, localPath, description: input.description ?? '', defaultBrokerId: null, createdBy: user.id, createdAt: t, updatedAt: t}
      try {
        await store.transaction(async (tx) => {
          await tx.projects.insert(project)
          await tx.projects.setMember(project.id, user.id, 'owner', t)
        })
      } catch (err) {
        // Lost a race with another registration of the same remote (or slug): link, or retry once.
        if (!(err instanceof AppError && err.code === 'conflict')) throw err
        const again = await link()
        if (again) return again
        project.slug = await uniqueSlug(name + '-' + project.id.slice(0, 4))
        await store.transaction(async (tx) => {
          await tx.projects.insert(project)
          await tx.projects.setMember(project.id, user.id, 'owner', t)
        })
      }
      deps.logger.info({projectId: project.id, userId: user.id}, 'project registered')
      return {project: {...project, role: 'owner'}, created: true}
    },

    async get(ctx: CallContext, idOrSlug: string): Promise<ProjectView & {stats: ProjectStats}> {
      const project = await load(ctx, idOrSlug, 'project.read')
      const stats: ProjectStats = {members: await store.projects.countMembers(project.id)}
      for (const contribute of statsContributors) Object.assign(stats, await contribute(project.id))
      return {...project, stats}
    },

    async update(ctx: CallContext, idOrSlug: string, patch: {name?: string; description?: string; gitRemote?: string | null}): Promise<ProjectView> {
      const project = await load(ctx, idOrSlug, 'project.update')
      const next: {name?: string; description?: string; gitRemote?: string | null; cloneUrl?: string | null} = {}
      if (patch.name !== undefined) {
        if (!patch.name.trim()) throw fieldError('name', 'must not be empty')
        next.name = patch.name.trim()
      }
      if (patch.description !== undefined) next.description = patch.description
      if (patch.gitRemote !== undefined) {
        if (patch.gitRemote === null || patch.gitRemote === '') Object.assign(next, {gitRemote: null, cloneUrl: null})
        else {
          const remote = normalizeGitRemote(patch.gitRemote)
          if (!remote) throw fieldError('gitRemote', `is not a git remote: "${patch.gitRemote}"`)
          Object.assign(next, {gitRemote: remote, cloneUrl: cloneUrlOf(patch.gitRemote)})
        }
      }
      const updated = await store.projects.update(project.id, next, now())
      if (!updated) throw notFound('project')
      return {...updated, role: project.role}
    },

    async delete(ctx: CallContext, idOrSlug: string): Promise<ProjectView> {
      const project = await load(ctx, idOrSlug, 'project.delete')
      await store.projects.delete(project.id)
      deps.logger.info({projectId: project.id, by: ctx.principal.id}, 'project deleted')
      return project
    },

    async members(ctx: CallContext, idOrSlug: string): Promise<Member[]> {
      const project = await load(ctx, idOrSlug, 'project.read')
      return store.projects.members(project.id)
    },

    /**
     * Adds a member or changes a role. Only owners (or system admins) grant or take away the
     * owner role, and a project always keeps at least one owner.
     */
    async setMember(ctx: CallContext, idOrSlug: string, input: {userId?: string; email?: string; role: string}): Promise<Member[]> {
      const project = await load(ctx, idOrSlug, 'project.members_manage')
      if (!PROJECT_ROLES.includes(input.role as ProjectRole)) throw fieldError('role', `must be one of ${PROJECT_ROLES.join(', ')}`)
      const user = input.userId ? await store.users.get(input.userId) : input.email ? await store.users.getByEmail(input.email) : null
      if (!user) throw notFound('user')
      const current = (await store.projects.roleOf(project.id, user.id)) as ProjectRole | null
      await guardOwnerChange(ctx, project, current, input.role as ProjectRole)
      await store.projects.setMember(project.id, user.id, input.role, now())
      return store.projects.members(project.id)
    },

    async removeMember(ctx: CallContext, idOrSlug: string, userId: string): Promise<Member[]> {
      const project = await load(ctx, idOrSlug, 'project.members_manage')
      const current = (await store.projects.roleOf(project.id, userId)) as ProjectRole | null
      if (!current) throw notFound('member')
      await guardOwnerChange(ctx, project, current, null)
      await store.projects.removeMember(project.id, userId)
      return store.projects.members(project.id)
    },
  }

  async function guardOwnerChange(ctx: CallContext, project: ProjectView, from: ProjectRole | null, to: ProjectRole | null) {
    const touchesOwner = from === 'owner' || to === 'owner'
    const isAdmin = ctx.principal.kind === 'user' && ctx.principal.systemAdmin && !ctx.bounds
    if (touchesOwner && project.role !== 'owner' && !isAdmin) throw new AppError('forbidden', 'only an owner may grant or remove the owner role')
    if (from === 'owner' && to !== 'owner' && (await store.projects.countMembers(project.id, 'owner')) <= 1) {
      throw new AppError('conflict', 'a project must keep at least one owner')
    }
  }
}

export type ProjectsService = ReturnType<typeof createProjectsService>
