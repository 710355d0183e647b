import {afterAll, beforeAll, expect, it} from 'vitest'
import {joinFakeBroker, startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {waitFor, type FakeBroker} from '../helpers/live-hub.js'

/**
 * Nothing dropped (CONTRACT "Hosted at scale"): a message to an agent whose broker is away is
 * kept (`delivery: "queued"`) and delivered, in order, when the broker returns; one sent with
 * `interrupt` is refused at once (503 `broker_unavailable`) and nothing is kept.
 */
describeEachDialect('messages: queued while the broker is away', (dialect) => {
  let hub: FakeBrokerHub
  let away: FakeBroker
  let agent: {id: string}
  const history = async () => (await hub.request('GET', `/api/v1/agents/${agent.id}/messages`)).body.messages as Array<{delivery: string; body: {text: string}}>
  const send = (body: Record<string, unknown>) => hub.request('POST', `/api/v1/agents/${agent.id}/message`, {body})

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
    away = await joinFakeBroker(hub, 'away')
    // Reconnected with the messages capability, as a real broker advertises it.
    await away.close()
    await away.connect({capabilities: ['agents', 'logs', 'attach', 'messages']})
    await waitFor(() => hub.tunnels.capabilities(away.brokerId)?.includes('messages'), 10_000, 'the broker back with messages')
    agent = (await hub.request('POST', '/api/v1/agents', {body: {name: 'patient', projectId: 'default', brokerId: away.brokerId}})).body.agent
  })
  afterAll(async () => {
    await away?.close()
    await hub?.dispose()
  })

  it('kept while away, refused with interrupt, delivered in order on the broker\'s return', async () => {
    await away.close()
    await waitFor(() => !hub.tunnels.isConnected(away.brokerId), 10_000, 'the broker away')

    const first = await send({message: 'first while away'})
    expect(first.status).toBe(202)
    expect(first.body).toMatchObject({delivery: 'queued'})
    expect((await send({message: 'second while away'})).status).toBe(202)
    const interrupt = await send({message: 'stop now', interrupt: true})
    expect(interrupt.status).toBe(503)
    expect(interrupt.body.error.code).toBe('broker_unavailable')
    expect((await history()).map((m) => [m.body.text, m.delivery])).toEqual([
      ['second while away', 'queued'],
      ['first while away', 'queued'],
    ])
    // A delivery pass while it is still away delivers nothing and fails nothing.
    expect(await hub.services.messages.deliverQueued()).toBe(0)
    expect((await history()).every((m) => m.delivery === 'queued')).toBe(true)

    const before = away.requests('agent.message').length
    await away.connect({agents: [agent.id], capabilities: ['agents', 'logs', 'attach', 'messages']})
    await waitFor(async () => (await history()).every((m) => m.delivery === 'delivered'), 15_000, 'both delivered after the return')
    const delivered = away.requests('agent.message').slice(before).map((m) => (m.params as {text: string}).text)
    expect(delivered).toEqual(['first while away', 'second while away'])
  })
})
