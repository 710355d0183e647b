import {afterEach, expect, it} from 'vitest'
import {joinFakeBroker, startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {waitFor, type FakeBroker} from '../helpers/live-hub.js'

const settings = (quotas: string) => ({'.svc/settings.yaml': `schema_version: "1"\nquotas:\n${quotas}`})

/**
 * Placement (CONTRACT "Hosted at scale"): an agent created without a broker goes to an online
 * broker that can run its runtime, the preferred default while it is under the cap, else the
 * least loaded; 429 only when every broker that could run it is at the cap, 503 only when none
 * is online; `--broker` wins; start and restart never move an agent.
 */
describeEachDialect('agents: placement across brokers', (dialect) => {
  let hub: FakeBrokerHub | undefined
  let others: FakeBroker[] = []
  afterEach(async () => {
    for (const f of others) await f.close()
    others = []
    await hub?.dispose()
    hub = undefined
  })

  const create = (name: string, extra: Record<string, unknown> = {}) => hub!.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', ...extra}})
  const brokerOf = async (name: string) => {
    const r = await create(name)
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.agent.brokerId as string
  }
  const gone = async (f: FakeBroker) => {
    await f.close()
    await waitFor(() => !hub!.tunnels.isConnected(f.brokerId), 10_000, 'the broker disconnected')
  }

  it('fills the default broker to its cap, then spreads over the least loaded; 429 when all are full; --broker wins', async () => {
    hub = await startFakeBrokerHub(dialect, {files: settings('  max_agents_per_broker: 2\n  max_agents_per_project: 50\n')})
    others = [await joinFakeBroker(hub, 'b2'), await joinFakeBroker(hub, 'b3')]
    const [def, b2, b3] = [hub.fake.brokerId, others[0].brokerId, others[1].brokerId]
    const placed = []
    for (const n of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6']) placed.push(await brokerOf(n))
    // Ties between equally loaded brokers go to the older one.
    expect(placed).toEqual([def, def, b2, b3, b2, b3])
    const full = await create('a7')
    expect(full.status).toBe(429)
    expect(full.body.error).toMatchObject({code: 'quota_exceeded', details: {quota: 'max_agents_per_broker', limit: 2}})
    // Stopping one frees its broker's slot: the next create goes there.
    const a3 = (await hub.request('GET', '/api/v1/projects/default/agents/a3')).body.agent
    expect((await hub.request('POST', `/api/v1/agents/${a3.id}/stop`, {body: {}})).status).toBe(200)
    expect(await brokerOf('a8')).toBe(b2)
    // --broker names one at its cap: refused, not moved elsewhere.
    const named = await create('a9', {brokerId: b3})
    expect(named.status).toBe(429)
    expect((await hub.request('GET', `/api/v1/brokers/${b3}`)).body.broker.agents).toBe(2)
  })

  it('creates at once fill every broker to its cap: one whose broker filled meanwhile goes to another, none is refused while a broker has room', async () => {
    hub = await startFakeBrokerHub(dialect, {files: settings('  max_agents_per_broker: 3\n  max_agents_per_project: 50\n')})
    others = [await joinFakeBroker(hub, 'b2'), await joinFakeBroker(hub, 'b3')]
    // Nine slots, nine creates side by side: placement reads loads before any insert commits.
    const made = await Promise.all(Array.from({length: 9}, (_, i) => create(`c${i}`)))
    expect(made.map((r) => r.status), JSON.stringify(made.map((r) => r.body.error))).toEqual(Array(9).fill(201))
    const per = new Map<string, number>()
    for (const r of made) per.set(r.body.agent.brokerId, (per.get(r.body.agent.brokerId) ?? 0) + 1)
    expect([...per.values()]).toEqual([3, 3, 3])
    const full = await create('c9')
    expect(full.status).toBe(429)
    expect(full.body.error).toMatchObject({code: 'quota_exceeded', details: {quota: 'max_agents_per_broker', limit: 3}})
  })

  it('without the cap enforced, brokers under it still come first, then the least loaded goes over it', async () => {
    hub = await startFakeBrokerHub(dialect, {files: settings('  max_agents_per_broker: 1\n  enforce_broker_quotas: false\n')})
    others = [await joinFakeBroker(hub, 'b2')]
    expect([await brokerOf('x1'), await brokerOf('x2'), await brokerOf('x3')]).toEqual([hub.fake.brokerId, others[0].brokerId, hub.fake.brokerId])
  })

  it('an asked-for runtime goes to a broker already running it, else to any (which builds it); none online is 503', async () => {
    hub = await startFakeBrokerHub(dialect)
    others = [await joinFakeBroker(hub, 'b2', {runtimes: ['podman']})]
    // The default broker runs local only; the one running podman takes a podman agent.
    expect((await create('pod', {runtime: 'podman'})).body.agent.brokerId).toBe(others[0].brokerId)
    // Nobody runs docker yet: the preferred (default) broker is asked to build it.
    expect((await create('dock', {runtime: 'docker'})).body.agent.brokerId).toBe(hub.fake.brokerId)
    await gone(others[0])
    await gone(hub.fake)
    const r = await create('none', {runtime: 'podman'})
    expect(r.status).toBe(503)
    expect(r.body.error.code).toBe('broker_unavailable')
    expect((await hub.request('GET', '/api/v1/projects/default/agents/none')).status).toBe(404)
  })

  it('start and restart never move an agent: its broker gone is 503 naming it, and a restart stops nothing', async () => {
    hub = await startFakeBrokerHub(dialect)
    others = [await joinFakeBroker(hub, 'b2'), await joinFakeBroker(hub, 'b3')]
    const stopped = (await create('resting', {brokerId: others[0].brokerId})).body.agent
    const running = (await create('working', {brokerId: others[1].brokerId})).body.agent
    expect((await hub.request('POST', `/api/v1/agents/${stopped.id}/stop`, {body: {}})).status).toBe(200)
    await gone(others[0])
    await gone(others[1])

    const start = await hub.request('POST', `/api/v1/agents/${stopped.id}/start`, {body: {}})
    expect(start.status).toBe(503)
    expect(start.body.error).toMatchObject({code: 'broker_unavailable', details: {brokerId: others[0].brokerId}})
    expect(start.body.error.message).toMatch(/broker b2 .*never moved/)
    expect((await hub.request('GET', `/api/v1/agents/${stopped.id}`)).body.agent).toMatchObject({phase: 'stopped', brokerId: others[0].brokerId})

    const restart = await hub.request('POST', `/api/v1/agents/${running.id}/restart`, {body: {}})
    expect(restart.status).toBe(503)
    expect(restart.body.error.message).toMatch(/broker b3/)
    expect((await hub.request('GET', `/api/v1/agents/${running.id}`)).body.agent).toMatchObject({phase: 'running', brokerId: others[1].brokerId})
    // The default broker, online all along, was not asked to start either.
    expect(hub.fake.requests('agent.start')).toHaveLength(0)
  })

  it('no broker online: 503 broker_unavailable', async () => {
    hub = await startFakeBrokerHub(dialect)
    await gone(hub.fake)
    const r = await create('nowhere')
    expect(r.status).toBe(503)
    expect(r.body.error.code).toBe('broker_unavailable')
  })
})
