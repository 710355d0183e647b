import {expect, it} from 'vitest'
import {loadWorld, planAdoption} from '../../src/domain/delegation/planner.js'
import type {AdoptionRecord} from '../../src/store/repositories/delegation-adoptions.js'
import {describeEachDialect} from '../helpers/hub.js'
import {buildLegacyFixture} from '../helpers/legacy-fixture.js'
import {hubDbPerTest, openStoreOn} from '../helpers/restart-hub.js'

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
