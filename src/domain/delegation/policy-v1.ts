/**
 * Compatibility policy V1: a literal table, copied from the spec. It never follows later
 * registry or role-scope changes, so it must not be derived from role-scopes.ts.
 * `agent.identity_token` is in no row (rule 4).
 */
const READONLY_V1 = ['harness_config.list', 'harness_config.read', 'project.read', 'skill.list', 'skill.read', 'template.list', 'template.read']
const BASELINE_V1 = [...READONLY_V1, 'agent.notify', 'agent.port_forward', 'agent.status_update', 'agent.token_refresh']
const FULL_V1 = [
  ...BASELINE_V1,
  'agent.attach',
  'agent.create',
  'agent.delete',
  'agent.lifecycle',
  'agent.set_message_mode',
  'cloud_service_account.assign',
  'project.secret_read',
  'secret.use',
  'template.create',
  'template.update',
  'cloud_service_account.use',
  'env_var.deliver',
  'secret.deliver',
  'skill_injection.deliver',
]

export const POLICY_V1_NAME = 'v1'

export const POLICY_V1: Readonly<Record<string, readonly string[]>> = Object.freeze({
  readonly: Object.freeze([...READONLY_V1].sort()),
  baseline: Object.freeze([...BASELINE_V1].sort()),
  full: Object.freeze([...FULL_V1].sort()),
})

/** Source credential kind recorded on adopted edges. */
export const ADOPTED_SOURCE_KIND = 'system_migration'

/** Provenance version written by this release on every recorded edge. */
export const CURRENT_PROVENANCE_VERSION = 1

/** Delegator of backfilled edges whose agent had no recorded creator. */
export const BACKFILL_SENTINEL = {kind: 'user', id: 'system/migration'} as const

const RANK: Record<string, number> = {readonly: 1, baseline: 2, full: 3}

/**
 * The V1 ceiling of one hop (rules 1 to 3): the lower of the edge role and the agent's applied
 * role picks the row; an assign-mode service account already in the agent's applied
 * configuration adds the two service-account permissions; an agent delegator's adopted or
 * recorded ceiling bounds the result. Returns a sorted array. Roles outside the table return
 * null (the planner excludes them before asking).
 */
export function policyV1Ceiling(input: {edgeRole: string; appliedRole: string; assignModeServiceAccount: boolean; parentCeiling: readonly string[] | null}): string[] | null {
  const er = RANK[input.edgeRole]
  const ar = RANK[input.appliedRole]
  if (!er || !ar) return null
  const role = er <= ar ? input.edgeRole : input.appliedRole
  const set = new Set(POLICY_V1[role])
  if (input.assignModeServiceAccount) {
    set.add('cloud_service_account.assign')
    set.add('cloud_service_account.use')
  }
  if (input.parentCeiling) {
    const parent = new Set(input.parentCeiling)
    for (const p of [...set]) if (!parent.has(p)) set.delete(p)
  }
  return [...set].sort()
}
