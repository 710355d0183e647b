import {describe, expect, it} from 'vitest'
import {loadWorld, planAdoption} from '../../src/domain/delegation/planner.js'
import type {AdoptionRecord} from '../../src/store/repositories/delegation-adoptions.js'
import {describeEachDialect, pgAvailable} from '../helpers/hub.js'
import {COHORT_KEY, MARKER_KEY, RETRY_VERSION} from '../../src/domain/delegation/types.js'
import {buildLegacyFixture} from '../helpers/legacy-fixture.js'
import {hubDbPerTest, openStoreOn, startHubOn} from '../helpers/restart-hub.js'

/**
 * A start-up pass never overwrites a record that changed under it (an admin commit on a serving
 * replica takes a pending record over while a starting replica plans the same hop): the pass's
 * writes for that hop are rolled back. PostgreSQL: the conditional record update finds the
 * status changed and the hop alone rolls back. SQLite: the transaction's read snapshot is stale,
 * so its first write fails and the run stops there (the next start goes on). Either way the
 * other writer's record and edges stand.
 */
describeEachDialect('delegation start-up migration: a record taken over during the pass', (dialect) => {
  const t = hubDbPerTest(dialect)

  it('the taken-over record and its edge are left as the other writer left them', async () => {
    await buildLegacyFixture({driver: t.db.driver, url: t.db.url, agents: 12, depth: 3, seed: 5, tokens: false})
    const other = await openStoreOn(t.db)
    try {
      const first = planAdoption(await loadWorld(other)).find((h) => h.outcome === 'adopt')!
      let taken: AdoptionRecord | null = null
      // Inside the first hop's transaction, before its write: another connection takes the record over.
      const beforeHopWrite = async (rec: AdoptionRecord) => {
        if (taken) return
        taken = rec
        await other.delegationAdoptions.update(rec.id, {status: 'adopted', origin: 'admin_commit', actorKind: 'user', actorId: 'an-admin'}, new Date().toISOString())
      }
      const hub = await t.start({delegationStartup: {beforeHopWrite}})
      expect(taken!.delegateAgentId).toBe(first.agentId)
      expect(await hub.store.delegationAdoptions.get(taken!.id)).toMatchObject({status: 'adopted', origin: 'admin_commit', actorId: 'an-admin', adoptedEdgeId: null})
      // The pass's adoption of that hop was rolled back: the original row is still the only active edge.
      expect((await hub.store.delegationEdges.activeFor(first.agentId)).map((e) => e.id)).toEqual([first.edgeId])
    } finally {
      await other.close()
    }
  })
})

/**
 * SPEC "Start-up migration run" 1: on the networked database the run is under the schema
 * migration lock, so replicas starting together on one database run it once: one cohort
 * snapshot, every adoptable hop adopted once, one record per examined hop.
 */
describe.skipIf(!(await pgAvailable()))('delegation start-up migration: replicas starting together [postgres]', () => {
  const t = hubDbPerTest('postgres')

  it('two Hubs starting at once on one database take one snapshot and adopt each hop once', async () => {
    await buildLegacyFixture({driver: t.db.driver, url: t.db.url, agents: 40, depth: 4, seed: 9, anomalies: true, tokens: false})
    const before = await openStoreOn(t.db)
    const plan = await (async () => {
      try {
        return planAdoption(await loadWorld(before))
      } finally {
        await before.close()
      }
    })()
    const adopt = plan.filter((h) => h.outcome === 'adopt')
    expect(adopt.length).toBeGreaterThan(10)
    const hubs = await Promise.all([startHubOn(t.db), startHubOn(t.db)])
    try {
      const store = hubs[0].store
      expect(await store.hubSettings.get(COHORT_KEY)).toMatchObject({recordCount: plan.length})
      const records = await store.delegationAdoptions.list()
      expect(records).toHaveLength(plan.length)
      expect(new Set(records.map((r) => r.delegateAgentId)).size).toBe(plan.length)
      // One start adopted every hop (the other found none pending): one audit record of the pass, none per hop.
      expect(await store.audit.list('delegation_provenance_adoption', 1000)).toEqual([])
      expect((await store.audit.list('delegation_provenance_adoption_commit', 1000)).map((a) => a.details)).toEqual([{origin: 'startup_migration', hops: adopt.length, pass: 'adopt'}])
      const byAgent = new Map(records.map((r) => [r.delegateAgentId, r]))
      for (const h of adopt) {
        expect(byAgent.get(h.agentId), h.agentId).toMatchObject({status: 'adopted'})
        expect((await store.delegationEdges.activeFor(h.agentId)).map((e) => e.id), h.agentId).toEqual([byAgent.get(h.agentId)!.adoptedEdgeId])
        expect((await store.delegationEdges.forAgent(h.agentId)).filter((e) => e.deactivationCause === 'provenance_adopted'), h.agentId).toHaveLength(1)
      }
      expect(await store.hubSettings.get(MARKER_KEY)).toMatchObject({retryVersion: RETRY_VERSION})
    } finally {
      for (const h of hubs) await h.dispose()
    }
  })
})
