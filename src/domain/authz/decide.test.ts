import {describe, expect, it} from 'vitest'
import {AppError} from '../../api/app-error.js'
import type {CallContext, Principal} from './context.js'
import {decideProject, enforce} from './decide.js'
import {PERMISSIONS, ROLE_PERMISSIONS, type Permission, type ProjectRole} from './permissions.js'

const P = 'project-p'
const OTHER = 'project-q'

const user = (systemAdmin = false): Principal => ({kind: 'user', id: 'u1', email: 'u1@x.io', displayName: 'U1', systemAdmin})
const ctx = (principal: Principal, extra: Partial<CallContext> = {}): CallContext => ({principal, credentialKind: 'session', requestId: 'r', ...extra})
const token = (projectId: string, permissions: Permission[]): Partial<CallContext> => ({
  credentialKind: 'user_access_token',
  bounds: {tokenId: 't', projectId, permissions: new Set(permissions)},
})

interface Row {
  who: string
  ctx: CallContext
  role: ProjectRole | null
  permission: Permission
  allowed: boolean
  reason: string
}

// principal x action x expected outcome (ARCHITECTURE habit 4)
const TABLE: Row[] = [
  // System admins hold every permission, member or not.
  {who: 'system admin, not a member', ctx: ctx(user(true)), role: null, permission: 'project.delete', allowed: true, reason: 'system_admin'},
  {who: 'system admin, not a member', ctx: ctx(user(true)), role: null, permission: 'agent.attach', allowed: true, reason: 'system_admin'},
  // Owners hold everything except agent.attach (no built-in role grants it).
  {who: 'owner', ctx: ctx(user()), role: 'owner', permission: 'project.read', allowed: true, reason: 'role'},
  {who: 'owner', ctx: ctx(user()), role: 'owner', permission: 'project.update', allowed: true, reason: 'role'},
  {who: 'owner', ctx: ctx(user()), role: 'owner', permission: 'project.delete', allowed: true, reason: 'role'},
  {who: 'owner', ctx: ctx(user()), role: 'owner', permission: 'project.members_manage', allowed: true, reason: 'role'},
  {who: 'owner', ctx: ctx(user()), role: 'owner', permission: 'agent.attach', allowed: false, reason: 'role_lacks_permission'},
  // Admins update and manage members, but do not delete.
  {who: 'admin', ctx: ctx(user()), role: 'admin', permission: 'project.read', allowed: true, reason: 'role'},
  {who: 'admin', ctx: ctx(user()), role: 'admin', permission: 'project.update', allowed: true, reason: 'role'},
  {who: 'admin', ctx: ctx(user()), role: 'admin', permission: 'project.members_manage', allowed: true, reason: 'role'},
  {who: 'admin', ctx: ctx(user()), role: 'admin', permission: 'project.delete', allowed: false, reason: 'role_lacks_permission'},
  // Members read and work with agents and artifacts.
  {who: 'member', ctx: ctx(user()), role: 'member', permission: 'project.read', allowed: true, reason: 'role'},
  {who: 'member', ctx: ctx(user()), role: 'member', permission: 'agent.create', allowed: true, reason: 'role'},
  {who: 'member', ctx: ctx(user()), role: 'member', permission: 'artifact.read', allowed: true, reason: 'role'},
  {who: 'member', ctx: ctx(user()), role: 'member', permission: 'artifact.create', allowed: true, reason: 'role'},
  {who: 'member', ctx: ctx(user()), role: 'member', permission: 'project.update', allowed: false, reason: 'role_lacks_permission'},
  {who: 'member', ctx: ctx(user()), role: 'member', permission: 'project.members_manage', allowed: false, reason: 'role_lacks_permission'},
  {who: 'member', ctx: ctx(user()), role: 'member', permission: 'project.delete', allowed: false, reason: 'role_lacks_permission'},
  // Non-members get nothing.
  {who: 'non-member', ctx: ctx(user()), role: null, permission: 'project.read', allowed: false, reason: 'not_a_member'},
  // A user access token bounds its user to one project and its permissions.
  {who: 'owner with token (read) on its project', ctx: ctx(user(), token(P, ['project.read'])), role: 'owner', permission: 'project.read', allowed: true, reason: 'role'},
  {who: 'owner with token (read) on its project', ctx: ctx(user(), token(P, ['project.read'])), role: 'owner', permission: 'project.delete', allowed: false, reason: 'token_lacks_permission'},
  {who: 'owner with token for another project', ctx: ctx(user(), token(OTHER, ['project.read'])), role: 'owner', permission: 'project.read', allowed: false, reason: 'token_project_mismatch'},
  {who: 'system admin with token (read)', ctx: ctx(user(true), token(P, ['project.read'])), role: null, permission: 'project.update', allowed: false, reason: 'token_lacks_permission'},
  {who: 'system admin with token for another project', ctx: ctx(user(true), token(OTHER, PERMISSIONS.slice())), role: null, permission: 'project.read', allowed: false, reason: 'token_project_mismatch'},
  {who: 'member with token carrying delete', ctx: ctx(user(), token(P, ['project.read', 'project.delete'])), role: 'member', permission: 'project.delete', allowed: false, reason: 'role_lacks_permission'},
  // Agents and brokers never hold project permissions through this decision.
  {who: 'agent', ctx: ctx({kind: 'agent', id: 'a1', projectId: P}, {credentialKind: 'agent'}), role: null, permission: 'project.read', allowed: false, reason: 'principal_not_user'},
  {who: 'broker', ctx: ctx({kind: 'broker', id: 'b1'}, {credentialKind: 'broker'}), role: null, permission: 'project.read', allowed: false, reason: 'principal_not_user'},
]

describe('decideProject', () => {
  it.each(TABLE)('$who / $permission -> allowed $allowed ($reason)', ({ctx, role, permission, allowed, reason}) => {
    const d = decideProject(ctx, P, role, permission)
    expect(d.allowed).toBe(allowed)
    expect(d.reason).toBe(reason)
  })

  it('no built-in project role grants agent.attach', () => {
    for (const role of ['owner', 'admin', 'member'] as const) expect(ROLE_PERMISSIONS[role].has('agent.attach')).toBe(false)
  })

  it('roles are nested: member within admin within owner', () => {
    for (const p of ROLE_PERMISSIONS.member) expect(ROLE_PERMISSIONS.admin.has(p)).toBe(true)
    for (const p of ROLE_PERMISSIONS.admin) expect(ROLE_PERMISSIONS.owner.has(p)).toBe(true)
  })
})

describe('enforce', () => {
  const denied = {allowed: false, reason: 'role_lacks_permission'}
  const thrown = (fn: () => void): AppError => {
    try {
      fn()
    } catch (err) {
      return err as AppError
    }
    throw new Error('expected a refusal')
  }

  it('passes an allowed decision', () => {
    expect(() => enforce({allowed: true, reason: 'role'}, {canSee: false, what: 'project', permission: 'project.read'})).not.toThrow()
  })

  it('a caller who cannot see the resource gets 404 not_found, as if it did not exist', () => {
    const err = thrown(() => enforce(denied, {canSee: false, what: 'project', permission: 'project.delete'}))
    expect([err.code, err.status, err.message]).toEqual(['not_found', 404, 'project not found'])
  })

  it('a caller who can see it but may not act gets 403 forbidden naming the permission', () => {
    const err = thrown(() => enforce(denied, {canSee: true, what: 'project', permission: 'project.delete'}))
    expect([err.code, err.status]).toEqual(['forbidden', 403])
    expect(err.details).toMatchObject({permission: 'project.delete', reason: 'role_lacks_permission'})
  })
})
