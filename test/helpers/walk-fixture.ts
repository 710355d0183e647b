import {expect} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import type {EdgeRecord} from '../../src/store/repositories/delegation-edges.js'
import type {FakeBrokerHub} from './fake-broker-hub.js'

/** Agents and edges for the walk tests, built through the real API and the store. */
export function walkFixture(hub: FakeBrokerHub, projectId: string) {
  return {
    /** Creates an agent through POST /api/v1/agents as `token` (201 expected); returns its ID. */
    async create(name: string, token: string, body: Record<string, unknown> = {}): Promise<string> {
      const r = await hub.request('POST', '/api/v1/agents', {body: {projectId, harnessConfig: 'shell', name, ...body}, token})
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      return r.body.agent.id as string
    },

    /**
     * Makes the agent's active edge a version-0 one, as the backfill writes for agents from a
     * release before provenance: same delegator and role, no source kind, no ceiling.
     */
    async unrecord(agentId: string): Promise<EdgeRecord> {
      const [edge] = await hub.store.delegationEdges.activeFor(agentId)
      return hub.store.transaction(async (tx) => {
        await tx.delegationEdges.deactivate(edge.id, null, iso(new Date()))
        return tx.delegationEdges.insert({
          ...edge,
          id: newId(),
          provenanceVersion: 0,
          sourceCredentialKind: null,
          ceiling: null,
          ceilingPolicy: null,
          ceilingProjectId: null,
          createdAt: iso(new Date()),
        })
      })
    },

    /** The IDs that a denial must never reveal: every edge of the agent and of its ancestors. */
    async chainIds(agentIds: string[]): Promise<string[]> {
      const ids = [...agentIds]
      for (const id of agentIds) ids.push(...(await hub.store.delegationEdges.forAgent(id)).map((e) => e.id))
      return ids
    },

    /** The project's secret list as an agent sees it: the probe of `project.secret_read`. */
    listSecrets: (token: string) => hub.request('GET', `/api/v1/projects/${projectId}/secrets`, {token}),
  }
}
