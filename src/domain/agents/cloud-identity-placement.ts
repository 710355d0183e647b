import type {Resolved} from '../project-settings/resolve.js'
import type {Repos} from '../../store/store.js'

const UNSET: Resolved = {value: null, from: 'none'}
// Cluster runtimes have their own cloud identity default (Passthrough); the Hub's must not override it.
const CLUSTER_RUNTIMES = new Set(['kubernetes'])

/**
 * Narrows the hub-level cloud identity default to where it may apply, once the broker is chosen
 * (spec, `agent_defaults.default_cloud_identity_mode`): a hub `Passthrough` applies only on the
 * Hub's own co-located broker and not on a cluster runtime; elsewhere it is left unset so the
 * runtime's default applies. A hub service account applies only with `Assign`. Values from the
 * request or the project are the caller's choice and are kept. Mutates and returns `applied`.
 */
export async function placeHubCloudIdentity(
  applied: Record<string, Resolved>,
  placement: {brokerId: string; colocatedBrokerId: string | null; repos: Pick<Repos, 'brokers'>},
): Promise<Record<string, Resolved>> {
  const mode = applied.defaultCloudIdentityMode
  if (mode?.from === 'hub' && mode.value === 'Passthrough') {
    const colocated = placement.brokerId === placement.colocatedBrokerId
    const runtimes = colocated ? ((await placement.repos.brokers.get(placement.brokerId))?.runtimes ?? []) : []
    if (!colocated || runtimes.some((r) => CLUSTER_RUNTIMES.has(r))) applied.defaultCloudIdentityMode = UNSET
  }
  const account = applied.defaultCloudIdentityServiceAccountId
  if (account?.from === 'hub' && applied.defaultCloudIdentityMode?.value !== 'Assign') applied.defaultCloudIdentityServiceAccountId = UNSET
  return applied
}
