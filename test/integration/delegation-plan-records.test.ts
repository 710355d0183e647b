import {expect, it} from 'vitest'
import type {Hop} from '../../src/domain/delegation/types.js'
import type {AdoptionRecord} from '../../src/store/repositories/delegation-adoptions.js'
import type {Store} from '../../src/store/store.js'
import {ADOPTION} from '../helpers/adoption.js'
import {describeEachDialect, type TestHub} from '../helpers/hub.js'
import {buildLegacyFixture} from '../helpers/legacy-fixture.js'
import {hubDbPerTest} from '../helpers/restart-hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Which record an adopt plan shows for each hop: the open start-up record naming the hop's edge
 * as its original (pending or skipped_changed), else the newest record naming it. The plan reads
 * every record except `adopted` ones, because an adopted record names an original that adoption
 * deactivated (and only a revert, which marks it reverted, brings that row back), while every
 * planned edge is active. This follows a database through start-up adoption stopped by a failed
 * write, admin commits, a revert and a second adoption, and at each step checks that premise
 * and the records the plan names against a read of every record.
 */
describeEachDialect('delegation adopt plan: the record of each hop', (dialect) => {
  const t = hubDbPerTest(dialect)

  const OPEN = new Set(['pending', 'skipped_changed'])
  /** The record a plan must name for an edge, chosen from every record there is. */
  function expectedRecord(all: AdoptionRecord[], edgeId: string | null): string | null {
    const naming = all.filter((r) => edgeId !== null && r.originalEdgeId === edgeId)
    const open = naming.filter((r) => OPEN.has(r.status)).sort((a, b) => (a.id < b.id ? -1 : 1))[0]
    if (open) return open.id
    const newest = naming.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))[0]
    return newest?.id ?? null
  }

  async function check(hub: TestHub, store: Store, admin: TestUser): Promise<Hop[]> {
    const all = await store.delegationAdoptions.list()
    for (const r of all.filter((x) => x.status === 'adopted')) {
      expect((await store.delegationEdges.get(r.originalEdgeId!))!.active, `original of adopted record ${r.id}`).toBe(false)
    }
    const p = await hub.request('POST', `${ADOPTION}/previews`, {body: {operation: 'adopt'}, token: admin.token})
    expect(p.status).toBe(200)
    const hops = p.body.hops as Hop[]
    for (const h of hops) expect(h.recordId, `hop of agent ${h.agentId}`).toBe(expectedRecord(all, h.edgeId))
    return hops
  }

  it('through start-up adoption, admin commits, a revert and a second adoption', async () => {
    await buildLegacyFixture({driver: t.db.driver, url: t.db.url, agents: 40, depth: 4, seed: 5, anomalies: true, tokens: false})
    // The third hop write fails: the first start leaves adopted, pending and excluded records.
    let writes = 0
    const hub = await t.start({delegationStartup: {beforeHopWrite: () => {
      if (++writes === 3) throw new Error('injected hop write failure')
    }}})
    const store = hub.store
    const admin = await createUser(hub, {systemAdmin: true})
    const statuses = new Set((await store.delegationAdoptions.list()).map((r) => r.status))
    for (const status of ['adopted', 'pending', 'excluded', 'recognized', 'recorded']) expect(statuses.has(status), status).toBe(true)
    const first = await check(hub, store, admin)
    // Pending hops are named by their open start-up record.
    expect(first.filter((h) => h.outcome === 'adopt' && h.recordId !== null).length).toBeGreaterThan(0)

    const commit = async (body: Record<string, unknown>) => {
      const p = await hub.request('POST', `${ADOPTION}/previews`, {body, token: admin.token})
      const c = await hub.request('POST', `${ADOPTION}/commits`, {body: {...body, planFingerprint: p.body.planFingerprint}, token: admin.token})
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      return c.body as {recordIds: string[]}
    }
    // An admin commit adopts one pending hop's agent (and takes over its start-up record).
    const pendingHop = first.find((h) => h.outcome === 'adopt' && h.recordId !== null)!
    const adopted = await commit({operation: 'adopt', scope: {agentIds: [pendingHop.agentId]}})
    await check(hub, store, admin)

    // A revert brings the original back: the plan names the reverted record for it.
    await commit({operation: 'revert', recordIds: [adopted.recordIds[0]]})
    const afterRevert = await check(hub, store, admin)
    expect(afterRevert.find((h) => h.agentId === pendingHop.agentId)).toMatchObject({outcome: 'adopt', recordId: expect.any(String)})

    // Adopting it again writes a new adopted record; the reverted one stays, naming a deactivated row.
    await commit({operation: 'adopt', scope: {agentIds: [pendingHop.agentId]}})
    const again = await check(hub, store, admin)
    expect(again.find((h) => h.agentId === pendingHop.agentId)).toMatchObject({outcome: 'recognized', recordId: null})
    // A fixture, two Hub starts and four plans: seconds on a quiet machine, far more than 30 on a loaded one.
  }, 120_000)
})
