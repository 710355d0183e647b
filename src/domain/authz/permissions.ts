/**
 * The permission registry: dotted IDs as the spec names them. Project roles map to sets of
 * these; user access tokens carry a subset; the delegation issue adds agent ceilings.
 */
export const PERMISSIONS = [
  'project.read',
  'project.update',
  'project.delete',
  'project.members_manage',
  'project.secret_read',
  'agent.list',
  'agent.read',
  'agent.create',
  'agent.delete',
  'agent.lifecycle',
  'agent.attach',
  'agent.notify',
  'agent.message',
  'agent.set_message_mode',
  'agent.port_forward',
  'agent.status_update',
  'agent.token_refresh',
  'agent.identity_token',
  'template.list',
  'template.read',
  'template.create',
  'template.update',
  'harness_config.list',
  'harness_config.read',
  'skill.list',
  'skill.read',
  'secret.use',
  'secret.deliver',
  'env_var.deliver',
  'skill_injection.deliver',
  'cloud_service_account.use',
  'cloud_service_account.assign',
  'artifact.read',
  'artifact.create',
] as const

export type Permission = (typeof PERMISSIONS)[number]

export const isPermission = (p: string): p is Permission => (PERMISSIONS as readonly string[]).includes(p)

export type ProjectRole = 'owner' | 'admin' | 'member'
export const PROJECT_ROLES: readonly ProjectRole[] = ['owner', 'admin', 'member']

const MEMBER: Permission[] = [
  'project.read',
  'agent.list',
  'agent.read',
  'agent.create',
  'agent.delete',
  'agent.lifecycle',
  'agent.notify',
  'agent.message',
  'template.list',
  'template.read',
  'template.create',
  'template.update',
  'harness_config.list',
  'harness_config.read',
  'skill.list',
  'skill.read',
  'artifact.read',
  'artifact.create',
]
const ADMIN: Permission[] = [...MEMBER, 'project.update', 'project.members_manage', 'project.secret_read', 'agent.set_message_mode']
const OWNER: Permission[] = [...ADMIN, 'project.delete']

/** Permissions of each built-in project role. No built-in role grants `agent.attach` (spec). */
export const ROLE_PERMISSIONS: Record<ProjectRole, ReadonlySet<Permission>> = {
  member: new Set(MEMBER),
  admin: new Set(ADMIN),
  owner: new Set(OWNER),
}
