import {randomBytes} from 'node:crypto'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {enteredStates} from '../../src/domain/events/notifications.js'
import {NOTIFY_STATES} from '../../src/api/notify-states.js'
import {describeEachDialect} from '../helpers/hub.js'
import {FakeBroker, waitFor} from '../helpers/live-hub.js'
import {createHubDb, startHubOn, type HubDb} from '../helpers/restart-hub.js'
import type {TestHub} from '../helpers/hub.js'

/**
 * Broker liveness across replicas (CONTRACT "Hosted at scale"): two Hubs on one database. The
 * replica holding a broker "crashes" (its tunnels cut without releasing the lease, its lease
 * timer stopped); the survivor, once the lease lapsed, shows the broker offline and logs an
 * `offline` event for its running agent, then the agent's activity again when the broker is back
 * (on the survivor). The survivor's clock is moved past the lease instead of waiting 20 s.
 */
describeEachDialect('broker liveness: leases in the database', (dialect) => {
  let db: HubDb
  let a: TestHub
  let b: TestHub
  let offsetMs = 0
  const open: FakeBroker[] = []

  beforeAll(async () => {
    db = await createHubDb(dialect)
    // Replicas share their secrets key (broker secrets are sealed with it).
    const env = {SVC_SECRETS_KEY: randomBytes(32).toString('hex')}
    a = await startHubOn(db, {env})
    b = await startHubOn(db, {env, clock: {now: () => new Date(Date.now() + offsetMs)}})
    for (const h of [a, b]) await h.app.listen({host: '127.0.0.1', port: 0})
  })
  afterAll(async () => {
    for (const f of open) await f.close().catch(() => {})
    await a?.dispose().catch(() => {})
    await b?.dispose()
    await db?.drop()
  })
  const urlOf = (h: TestHub) => `http://127.0.0.1:${(h.app.server.address() as {port: number}).port}`

  it('a crashed replica\'s broker goes offline on the survivor with its agents\' offline events, and back with their activity', async () => {
    const projectId = (await a.request('POST', '/api/v1/projects/register', {body: {name: 'leases'}})).body.project.id
    const reg = await a.request('POST', '/api/v1/brokers/register', {body: {name: 'leased'}})
    const j = await a.request('POST', '/api/v1/brokers/join', {body: {joinToken: reg.body.joinToken}, token: null})
    const onA = new FakeBroker(urlOf(a), j.body.brokerId, j.body.secret)
    open.push(onA)
    await onA.connect()
    await waitFor(async () => (await b.request('GET', `/api/v1/brokers/${onA.brokerId}`)).body.broker.status === 'online', 10_000, 'broker online on both replicas')
    const created = await a.request('POST', '/api/v1/agents', {body: {projectId, harnessConfig: 'shell', name: 'leased-agent', brokerId: onA.brokerId}})
    expect(created.status).toBe(201)
    const agentId = created.body.agent.id as string
    await a.request('POST', `/api/v1/agents/${agentId}/status`, {body: {activity: 'thinking', detail: 'busy'}})
    const seqBefore = await b.store.agentEvents.latestSeq()

    // A dies without a word: nothing releases the lease.
    await a.services.brokers.liveness.stop()
    a.tunnels.closeAll()
    // Before the lease lapses the survivor keeps the broker online (a replica that is slow is not dead).
    await b.services.brokers.liveness.tick()
    expect((await b.request('GET', `/api/v1/brokers/${onA.brokerId}`)).body.broker.status).toBe('online')
    offsetMs = 16_000
    await b.services.brokers.liveness.tick()
    expect((await b.request('GET', `/api/v1/brokers/${onA.brokerId}`)).body.broker.status).toBe('offline')
    const offline = (await b.store.agentEvents.since(seqBefore)).filter((e) => e.agentId === agentId)
    expect(offline.map((e) => [e.prevActivity, e.activity])).toEqual([['thinking', 'offline']])
    // A webhook channel listing `offline` is sent it (the states an event entered).
    expect(enteredStates(offline[0])).toEqual(['offline'])
    expect(NOTIFY_STATES).toContain('offline')
    // A second sweep (or another survivor) logs nothing more.
    await b.services.brokers.liveness.tick()
    expect((await b.store.agentEvents.since(seqBefore)).filter((e) => e.agentId === agentId)).toHaveLength(1)

    // The broker comes back, on the survivor: online, and its agent's activity is an event again.
    offsetMs = 0
    const onB = new FakeBroker(urlOf(b), j.body.brokerId, j.body.secret)
    open.push(onB)
    await onB.connect({agents: [agentId]})
    await waitFor(async () => (await b.request('GET', `/api/v1/brokers/${onA.brokerId}`)).body.broker.status === 'online', 10_000, 'broker back online')
    const back = await waitFor(async () => (await b.store.agentEvents.since(seqBefore)).filter((e) => e.agentId === agentId && e.prevActivity === 'offline'))
    expect(back.map((e) => e.activity)).toEqual(['thinking'])
    expect(enteredStates(back[0])).toEqual(['thinking'])
    // The event stream shows both (an agent event with activity offline, then thinking).
    const feed = (await b.store.agentEvents.since(seqBefore)).filter((e) => e.agentId === agentId).map((e) => e.activity)
    expect(feed).toEqual(['offline', 'thinking'])
    // The holder lost its database for longer than the lease and another replica made the broker
    // offline meanwhile: its next tick (database back) takes the broker it still holds back online.
    await b.store.brokers.leases.expire(onA.brokerId, new Date(Date.now() + 60_000).toISOString())
    expect((await b.request('GET', `/api/v1/brokers/${onA.brokerId}`)).body.broker.status).toBe('offline')
    await b.services.brokers.liveness.tick()
    expect((await b.request('GET', `/api/v1/brokers/${onA.brokerId}`)).body.broker.status).toBe('online')
    // Its tunnel closing on the replica that holds it makes it offline at once (no lease wait).
    await onB.close()
    await waitFor(async () => (await b.request('GET', `/api/v1/brokers/${onA.brokerId}`)).body.broker.status === 'offline', 10_000, 'broker offline after its tunnel closed')
  })
})
