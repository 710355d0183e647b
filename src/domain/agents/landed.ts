import type {AgentView} from './agent-state.js'
import type {Store} from '../../store/store.js'

/**
 * Whether an agent's work has landed, from the audit records the review service writes for every
 * merge and push that succeeded (review-service.ts): `mergedAt` and `pushedAt` are the latest of
 * each, null when there was none. One query for a whole list.
 */
export async function withLanded(store: Store, views: AgentView[]): Promise<AgentView[]> {
  if (views.length === 0) return views
  const latest = await store.audit.latestByTarget(['agent_merge', 'agent_push'], views.map((v) => v.id))
  return views.map((v) => ({...v, mergedAt: latest.get(v.id)?.agent_merge ?? null, pushedAt: latest.get(v.id)?.agent_push ?? null}))
}
