import {AppError} from '../../api/app-error.js'
import type {Tree} from './keys.js'

/** A service account the Hub knows, as the Assign rule needs it. */
export interface ServiceAccountRecord {
  id: string
  /** `hub`: usable by every project; `project`: registered for one project only. */
  scope: 'hub' | 'project'
  /** True once the Hub proved it can act as the account. */
  verified: boolean
}

/**
 * What the `Assign` rule of `default_cloud_identity_mode` consults (spec: "Assign accepts only a
 * verified hub-scoped service account and requires `cloud_iam_check_mode: enforce`").
 */
export interface CloudIdentityPolicy {
  /** This Hub's `cloud_iam_check_mode`; only `enforce` allows Assign. */
  checkMode(): string
  serviceAccount(id: string): ServiceAccountRecord | null
}

/**
 * This Hub's policy: it has no cloud IAM integration, so it cannot verify a service account and
 * never enforces cloud IAM checks. Every hub-level `Assign` is therefore refused, and an `Assign`
 * seeded from bootstrap is not applied (docs/settings.md, "Cloud identity"). A registry with real
 * verification plugs in here.
 */
export const NO_CLOUD_IAM: CloudIdentityPolicy = {checkMode: () => 'off', serviceAccount: () => null}

const MODE = 'default_cloud_identity_mode'
const ACCOUNT = 'default_cloud_identity_service_account_id'

/** Why a hub-level `Assign` is not acceptable under `policy` (empty: acceptable). */
export function assignProblems(flat: Tree, policy: CloudIdentityPolicy): string[] {
  const problems: string[] = []
  if (policy.checkMode() !== 'enforce') problems.push(`Assign requires cloud_iam_check_mode: enforce (this Hub's mode is ${policy.checkMode()})`)
  const id = flat[ACCOUNT]
  if (typeof id !== 'string' || !id) problems.push(`Assign needs ${ACCOUNT} naming a verified hub-scoped service account`)
  else {
    const sa = policy.serviceAccount(id)
    if (!sa) problems.push(`service account ${JSON.stringify(id)} is not registered on this Hub`)
    else if (sa.scope !== 'hub') problems.push(`service account ${JSON.stringify(id)} is not hub-scoped`)
    else if (!sa.verified) problems.push(`service account ${JSON.stringify(id)} is not verified`)
  }
  return problems
}

/** Throws 422 `invalid_cloud_identity_mode` when a section value sets `Assign` that the policy refuses. */
export function checkAssign(flat: Tree, policy: CloudIdentityPolicy): void {
  if (flat[MODE] !== 'Assign') return
  const problems = assignProblems(flat, policy)
  if (problems.length) {
    throw new AppError('invalid_cloud_identity_mode', `${MODE}: ${problems.join('; ')}`, {key: MODE, value: 'Assign', problems, service_account_id: flat[ACCOUNT] ?? null})
  }
}

/** Hub agent defaults with an `Assign` the policy refuses left out (with its account): never applied unchecked. */
export function applicableDefaults(defaults: Tree, policy: CloudIdentityPolicy): Tree {
  if (defaults[MODE] !== 'Assign' || !assignProblems(defaults, policy).length) return defaults
  const out = {...defaults}
  delete out[MODE]
  delete out[ACCOUNT]
  return out
}
