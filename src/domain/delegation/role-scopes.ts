import type {Permission} from '../authz/permissions.js'

/**
 * Agent roles as the current permission registry scopes them. These follow the registry and
 * may grow in later releases; compatibility policy V1 (policy-v1.ts) is a frozen copy that never
 * does. A new edge's ceiling is its role's set here, bounded by the delegator's own ceiling.
 */
const READONLY: Permission[] = [
  'agent.list',
  'agent.read',
  'artifact.read',
  'harness_config.list',
  'harness_config.read',
  'project.read',
  'skill.list',
  'skill.read',
  'template.list',
  'template.read',
]
const BASELINE: Permission[] = [...READONLY, 'agent.notify', 'agent.port_forward', 'agent.status_update', 'agent.token_refresh', 'artifact.create']
const FULL: Permission[] = [
  ...BASELINE,
  'agent.attach',
  'agent.create',
  'agent.delete',
  'agent.identity_token',
  'agent.lifecycle',
  'agent.message',
  'agent.set_message_mode',
  'cloud_service_account.assign',
  'cloud_service_account.use',
  'env_var.deliver',
  'project.secret_read',
  'secret.deliver',
  'secret.use',
  'skill_injection.deliver',
  'template.create',
  'template.update',
]

export const ROLE_SCOPES: Readonly<Record<string, ReadonlySet<Permission>>> = {
  readonly: new Set(READONLY),
  baseline: new Set(BASELINE),
  full: new Set(FULL),
  none: new Set(),
}

export const KNOWN_ROLES = ['readonly', 'baseline', 'full', 'none'] as const

/** Roles from least to most authority: "the lower of two roles" compares these ranks. */
export const ROLE_RANK: Readonly<Record<string, number>> = {none: 0, readonly: 1, baseline: 2, full: 3}

/**
 * Permissions that need recorded provenance on every hop of the walk: a version-0 hop denies
 * them (SPEC "Delegation edge").
 */
export const PROVENANCE_REQUIRED: ReadonlySet<Permission> = new Set<Permission>([
  'cloud_service_account.use',
  'cloud_service_account.assign',
  'project.secret_read',
  'secret.use',
  'secret.deliver',
  'env_var.deliver',
  'skill_injection.deliver',
  'agent.identity_token',
])
