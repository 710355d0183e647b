import type {CallContext} from '../authz/context.js'
import {decideProject, type Decision} from '../authz/decide.js'
import type {ProjectRole} from '../authz/permissions.js'

/** Agent token scopes for artifacts (spec "Authentication" 8). */
export const SCOPE_ARTIFACT_READ = 'project:artifact:read'
export const SCOPE_ARTIFACT_WRITE = 'project:artifact:write'

export interface ArtifactFacts {
  ownerKind: 'user' | 'agent'
  ownerId: string
  /** The home project. */
  projectId: string
  grants: ReadonlyArray<{granteeKind: 'user' | 'project'; granteeId: string}>
}

/** Membership roles of the calling user, by project ID (absent or null: not a member). */
export type RolesOf = Readonly<Record<string, ProjectRole | null | undefined>>

const deny = (reason: string, details?: Record<string, unknown>): Decision => ({allowed: false, reason, ...(details && {details})})
const allow = (reason: string): Decision => ({allowed: true, reason})

export const isOwner = (ctx: CallContext, a: Pick<ArtifactFacts, 'ownerKind' | 'ownerId'>) => ctx.principal.kind === a.ownerKind && ctx.principal.id === a.ownerId

const hasScope = (ctx: CallContext, scope: string) => !!ctx.scopes?.has(scope)

/**
 * May the caller read the artifact? Owners always; readers of the home project
 * (`artifact.read`); users and projects it was shared with. Agents need scope
 * `project:artifact:read` for anything, even an artifact shared with them. A user access token
 * needs `artifact.read` and keeps to its project: the artifact's home project or one it was
 * shared with must be the token's project.
 */
export function decideRead(ctx: CallContext, a: ArtifactFacts, roles: RolesOf): Decision {
  const p = ctx.principal
  const projectGrants = a.grants.filter((g) => g.granteeKind === 'project').map((g) => g.granteeId)
  if (p.kind === 'agent') {
    if (!hasScope(ctx, SCOPE_ARTIFACT_READ)) return deny('agent_lacks_scope', {scope: SCOPE_ARTIFACT_READ})
    if (isOwner(ctx, a)) return allow('owner')
    if (p.projectId === a.projectId) return allow('home_project')
    if (projectGrants.includes(p.projectId)) return allow('project_grant')
    return deny('agent_other_project')
  }
  if (p.kind !== 'user') return deny('principal_not_allowed')
  if (ctx.bounds) {
    if (!ctx.bounds.permissions.has('artifact.read')) return deny('token_lacks_permission')
    if (a.projectId !== ctx.bounds.projectId && !projectGrants.includes(ctx.bounds.projectId)) return deny('token_project_mismatch')
  }
  if (isOwner(ctx, a)) return allow('owner')
  if (a.grants.some((g) => g.granteeKind === 'user' && g.granteeId === p.id)) return allow('user_grant')
  if (decideProject(ctx, a.projectId, roles[a.projectId] ?? null, 'artifact.read').allowed) return allow('home_project')
  for (const id of projectGrants) if (decideProject(ctx, id, roles[id] ?? null, 'artifact.read').allowed) return allow('project_grant')
  return deny('not_a_reader')
}

/**
 * May the caller publish a new artifact into `projectId`? `status` tells an agent without the
 * read scope (401, as the spec says) apart from any other refusal (403).
 */
export function decidePublish(ctx: CallContext, projectId: string, role: ProjectRole | null): Decision & {status?: 401 | 403} {
  const p = ctx.principal
  if (p.kind === 'agent') {
    if (!hasScope(ctx, SCOPE_ARTIFACT_READ)) return {...deny('agent_lacks_scope', {scope: SCOPE_ARTIFACT_READ}), status: 401}
    if (!hasScope(ctx, SCOPE_ARTIFACT_WRITE)) return {...deny('agent_lacks_scope', {scope: SCOPE_ARTIFACT_WRITE}), status: 403}
    if (p.projectId !== projectId) return {...deny('agent_other_project'), status: 403}
    return allow('agent_own_project')
  }
  if (p.kind !== 'user') return {...deny('principal_not_allowed'), status: 403}
  const d = decideProject(ctx, projectId, role, 'artifact.create')
  return d.allowed ? d : {...d, status: 403}
}

export type ManageAction = 'version' | 'delete' | 'share'

/**
 * Changing (new version), deleting and sharing belong to the owner. No agent deletes or
 * shares; an owning agent publishes new versions with scope `project:artifact:write`. A user
 * access token needs `artifact.create` and the artifact's home project as its project.
 */
export function decideManage(ctx: CallContext, a: ArtifactFacts, action: ManageAction): Decision {
  const p = ctx.principal
  if (!isOwner(ctx, a)) return deny('not_owner')
  if (p.kind === 'agent') {
    if (action !== 'version') return deny('agents_cannot_' + action)
    if (!hasScope(ctx, SCOPE_ARTIFACT_WRITE)) return deny('agent_lacks_scope', {scope: SCOPE_ARTIFACT_WRITE})
    return allow('owner')
  }
  if (ctx.bounds) {
    if (!ctx.bounds.permissions.has('artifact.create')) return deny('token_lacks_permission')
    if (ctx.bounds.projectId !== a.projectId) return deny('token_project_mismatch')
  }
  return allow('owner')
}
