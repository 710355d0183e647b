import type {Logger} from 'pino'
import type {Store} from '../../store/store.js'
import {newId} from '../shared/secrets.js'
import {BACKFILL_SENTINEL} from './policy-v1.js'
import {BACKFILL_MARKER_KEY} from './types.js'

/**
 * The delegation-edge backfill: every agent without any edge (it predates edges) gets a
 * version-0 edge naming its recorded creator as delegator, or the sentinel
 * `user:system/migration` when none was recorded. Runs once (marker), in one transaction, at
 * start-up before the provenance adoption. Returns the number of edges written, or null when
 * the marker says it already ran.
 */
export async function backfillDelegationEdges(store: Store, now: string, logger: Logger): Promise<number | null> {
  if (await store.hubSettings.get(BACKFILL_MARKER_KEY)) return null
  const written = await store.transaction(async (tx) => {
    if (await tx.hubSettings.get(BACKFILL_MARKER_KEY)) return null
    const have = await tx.delegationEdges.agentIdsWithEdges()
    // The config is not read: an agent whose config no longer parses still gets its edge (the
    // planner reports it as unreadable_agent_config instead of the backfill failing at every start).
    const agents = await tx.agents.listCreators()
    const edges = agents
      .filter((a) => !have.has(a.id))
      .map((a) => ({
        id: newId(),
        delegateAgentId: a.id,
        projectId: a.projectId,
        delegator: a.createdBy ?? {...BACKFILL_SENTINEL},
        role: a.role,
        provenanceVersion: 0,
        sourceCredentialKind: null,
        ceiling: null,
        ceilingPolicy: null,
        ceilingProjectId: null,
        initiator: null,
        createdAt: now,
      }))
    await tx.delegationEdges.insertMany(edges)
    await tx.hubSettings.put(BACKFILL_MARKER_KEY, {writtenAt: now, edges: edges.length}, now)
    return edges.length
  })
  if (written) logger.info({edges: written}, 'delegation edges backfilled for agents that predate them')
  return written
}
