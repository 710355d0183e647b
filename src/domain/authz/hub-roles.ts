/**
 * Built-in Hub roles: named sets of admin permissions a system admin gives a user
 * (`users.hub_role`, PATCH /api/v1/users/:id `hubRole`). A system admin holds every admin
 * permission whatever its role; a role adds only the permissions listed here.
 */

/** Every admin permission, in the order GET /api/v1/admin/status lists them. */
export const ADMIN_PERMISSIONS = [
  'admin.status.read',
  'admin.server_config.read',
  'admin.server_config.write',
  'admin.maintenance.read',
  'admin.maintenance.write',
  'admin.profiling.read',
  'admin.profiling.write',
  'admin.templates.manage',
  'admin.users.manage',
  'admin.delegation_adoption',
] as const

export type AdminPermission = (typeof ADMIN_PERMISSIONS)[number]

export const HUB_ROLES = {
  /** Manages hub-wide templates; no settings, maintenance, profiling, users or adoption. */
  template_admin: ['admin.status.read', 'admin.templates.manage'],
} as const satisfies Record<string, readonly AdminPermission[]>

export type HubRole = keyof typeof HUB_ROLES

export const HUB_ROLE_NAMES = Object.keys(HUB_ROLES) as HubRole[]

export const isHubRole = (v: unknown): v is HubRole => typeof v === 'string' && Object.hasOwn(HUB_ROLES, v)

/** The admin permissions of a user: all of them for a system admin, else its role's. */
export function permissionsOf(user: {systemAdmin: boolean; hubRole: HubRole | null}): AdminPermission[] {
  if (user.systemAdmin) return [...ADMIN_PERMISSIONS]
  const held = new Set<AdminPermission>(user.hubRole ? HUB_ROLES[user.hubRole] : [])
  return ADMIN_PERMISSIONS.filter((p) => held.has(p))
}
