import pino from 'pino'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub, listenHub, type Hub} from '../../src/main.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect, pgAvailable} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {openSse, type SseClient} from '../helpers/sse.js'
import {createUser} from '../helpers/users.js'

const HEARTBEAT_MS = '300'

/** `GET /api/v1/events` through a real HTTP client on loopback. */
describeEachDialect('agent events (SSE)', (dialect) => {
  let hub: FakeBrokerHub
  const streams: SseClient[] = []
  const sse = async (query = '', o: {token?: string; headers?: Record<string, string>} = {}) => {
    const s = await openSse(`${hub.url}/api/v1/events${query}`, {token: o.token ?? hub.devToken, headers: o.headers})
    streams.push(s)
    return s
  }
  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name, harnessConfig: 'shell', ...extra}})
    expect(r.status).toBe(201)
    return r.body.agent as {id: string; name: string; projectId: string}
  }
  const report = (id: string, body: Record<string, unknown>) => hub.request('POST', `/api/v1/agents/${id}/status`, {token: hub.tokenOf(id), body})

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect, {env: {SVC_EVENTS_HEARTBEAT_MS: HEARTBEAT_MS}})
  })
  afterAll(async () => {
    for (const s of streams) s.close()
    await hub?.dispose()
  })

  it('streams an agent\'s changes, its status reports included, as `agent` events with the pinned shape', async () => {
    const s = await sse()
    expect(s.status).toBe(200)
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/)
    const a = await create('ev-one')
    const running = await s.next((e) => e.data.id === a.id && e.data.phase === 'running', 'running event')
    expect(running.event).toBe('agent')
    expect(Object.keys(running.data).sort()).toEqual(['activity', 'at', 'detail', 'id', 'name', 'phase', 'projectId'])
    expect(running.data).toMatchObject({name: 'ev-one', projectId: a.projectId})
    expect((await report(a.id, {activity: 'waiting_for_input', detail: 'Bash: rm -rf build?'})).status).toBe(200)
    const waiting = await s.next((e) => e.data.id === a.id && e.data.activity === 'waiting_for_input', 'waiting event')
    expect(waiting.data.detail).toBe('Bash: rm -rf build?')
    expect(Number(waiting.id)).toBeGreaterThan(Number(running.id))
    // A report that changes nothing is no event.
    const count = s.events.length
    await report(a.id, {activity: 'waiting_for_input', detail: 'Bash: rm -rf build?'})
    await report(a.id, {activity: 'thinking'})
    await s.next((e) => e.data.id === a.id && e.data.activity === 'thinking')
    expect(s.events.slice(count).map((e) => e.data.activity)).toEqual(['thinking'])
  })

  it('sends a heartbeat comment', async () => {
    const s = await sse()
    await waitFor(() => s.comments.includes('heartbeat'), 5000, 'heartbeat')
  })

  it('resumes after Last-Event-ID with exactly the events missed, on a new connection', async () => {
    const a = await create('ev-resume')
    const s1 = await sse(`?agentId=${a.id}`)
    await report(a.id, {activity: 'executing', detail: 'Bash: npm test'})
    const seen = await s1.next((e) => e.data.activity === 'executing')
    s1.close()
    // Reports within one flush interval coalesce (the latest wins): wait for each to be logged.
    const probe = await sse(`?agentId=${a.id}`)
    await report(a.id, {activity: 'idle', detail: ''})
    await probe.next((e) => e.data.activity === 'idle')
    await report(a.id, {activity: 'waiting_for_input', detail: 'Continue?'})
    await probe.next((e) => e.data.detail === 'Continue?')
    await report(a.id, {detail: 'Continue? (y/n)'})
    await probe.next((e) => e.data.detail === 'Continue? (y/n)')
    const s2 = await sse(`?agentId=${a.id}`, {headers: {'last-event-id': seen.id!}})
    await s2.next((e) => e.data.detail === 'Continue? (y/n)')
    expect(s2.events.map((e) => [e.data.activity, e.data.detail])).toEqual([
      ['idle', ''],
      ['waiting_for_input', 'Continue?'],
      ['waiting_for_input', 'Continue? (y/n)'],
    ])
    const ids = s2.events.map((e) => Number(e.id))
    expect(ids).toEqual([...ids].sort((x, y) => x - y))
  })

  it('shows a caller only agents it may read: another user outside the project sees none of them', async () => {
    const stranger = await createUser(hub)
    const mine = await sse()
    const theirs = await sse('', {token: stranger.token})
    expect(theirs.status).toBe(200)
    const a = await create('ev-private')
    await report(a.id, {activity: 'waiting_for_input'})
    await mine.next((e) => e.data.id === a.id && e.data.activity === 'waiting_for_input')
    await waitFor(() => theirs.comments.filter((c) => c === 'heartbeat').length >= 2, 5000, 'two heartbeats')
    expect(theirs.events).toEqual([])
    // The agent reads its own events (no walk), and nothing of another project.
    const self = await sse('', {token: hub.tokenOf(a.id)})
    await report(a.id, {activity: 'idle'})
    await self.next((e) => e.data.id === a.id && e.data.activity === 'idle')
  })

  it('refuses a bad Last-Event-ID and an unauthenticated caller with the error envelope', async () => {
    const bad = await sse('', {headers: {'last-event-id': 'yesterday'}})
    expect(bad.status).toBe(400)
    expect(JSON.parse(bad.body).error.code).toBe('validation_error')
    const anon = await openSse(`${hub.url}/api/v1/events`)
    expect(anon.status).toBe(401)
  })

  it('usage: cumulative totals per session are summed, priced by model when the harness gives no cost, and summed per project', async () => {
    const a = await create('ev-usage')
    await report(a.id, {usage: {sessionId: 's1', inputTokens: 1000, outputTokens: 100, modelCalls: 2, costUsd: 0.5}})
    // A later report of the same session replaces its totals (cumulative), another session adds.
    await report(a.id, {usage: {sessionId: 's1', inputTokens: 3000, outputTokens: 300, modelCalls: 4, costUsd: 1.25}})
    await report(a.id, {usage: {sessionId: 's2', inputTokens: 1_000_000, outputTokens: 100_000, modelCalls: 1, model: 'claude-sonnet-4-5'}})
    const got = (await hub.request('GET', `/api/v1/agents/${a.id}`)).body.agent
    expect(got.usage).toMatchObject({inputTokens: 1_003_000, outputTokens: 100_300, modelCalls: 5, costUsd: 1.25 + 3 + 1.5})
    expect(got.usage.sessions.s2).toMatchObject({costFrom: 'price_table', costUsd: 4.5})
    expect(got.usage.sessions.s1).toMatchObject({costFrom: 'harness'})
    const stats = (await hub.request('GET', `/api/v1/projects/${a.projectId}`)).body.project.stats
    expect(stats.modelCalls).toBeGreaterThanOrEqual(5)
    expect(stats.costUsd).toBeGreaterThanOrEqual(5.75)
  })

  it('max_model_calls: a report over the limit stops the agent with activity limits_exceeded', async () => {
    const a = await create('ev-limit', {maxModelCalls: 3})
    const s = await sse(`?agentId=${a.id}`)
    await report(a.id, {usage: {sessionId: 'x', inputTokens: 10, outputTokens: 10, modelCalls: 3}})
    expect((await hub.request('GET', `/api/v1/agents/${a.id}`)).body.agent.phase).toBe('running')
    await report(a.id, {activity: 'thinking', usage: {sessionId: 'x', inputTokens: 20, outputTokens: 20, modelCalls: 4}})
    const got = (await hub.request('GET', `/api/v1/agents/${a.id}`)).body.agent
    expect(got).toMatchObject({phase: 'stopped', activity: 'limits_exceeded'})
    expect(got.detail).toMatch(/max_model_calls \(3\)/)
    expect(hub.fake.requests('agent.stop').some((m) => (m.params as {agentId: string}).agentId === a.id)).toBe(true)
    await s.next((e) => e.data.phase === 'stopped' && e.data.activity === 'limits_exceeded')
  })
})

/** Two Hubs on one PostgreSQL database: a change on one reaches a stream of the other. */
describe.skipIf(!(await pgAvailable()))('agent events across replicas [postgres]', () => {
  let hub: FakeBrokerHub
  let other: Hub
  let otherUrl: string
  beforeAll(async () => {
    hub = await startFakeBrokerHub('postgres')
    const env = {...hub.env}
    const bootstrap = resolveBootstrap({port: 0}, env)
    bootstrap.values['server.broker.enabled'] = false
    other = await createHub(bootstrap, {env, logger: pino({level: 'silent'})})
    otherUrl = await listenHub(other, bootstrap)
  })
  afterAll(async () => {
    await other?.close()
    await hub?.dispose()
  })

  it('closing a Hub ends its open streams (they do not hold the close)', async () => {
    const env = {...hub.env}
    const bootstrap = resolveBootstrap({port: 0}, env)
    bootstrap.values['server.broker.enabled'] = false
    const third = await createHub(bootstrap, {env, logger: pino({level: 'silent'})})
    const url = await listenHub(third, bootstrap)
    const s = await openSse(`${url}/api/v1/events`, {token: hub.devToken})
    expect(s.status).toBe(200)
    await third.close()
    await waitFor(() => s.ended, 5000, 'the stream ended')
  })

  it('a status report on one replica reaches an SSE client of the other', async () => {
    const s = await openSse(`${otherUrl}/api/v1/events`, {token: hub.devToken})
    try {
      const r = await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name: 'ev-replica', harnessConfig: 'shell'}})
      const id = r.body.agent.id
      await hub.request('POST', `/api/v1/agents/${id}/status`, {token: hub.tokenOf(id), body: {activity: 'waiting_for_input', detail: 'from replica A'}})
      const e = await s.next((x) => x.data.id === id && x.data.activity === 'waiting_for_input')
      expect(e.data.detail).toBe('from replica A')
      // And resume on the other replica from the same log.
      const s2 = await openSse(`${otherUrl}/api/v1/events?agentId=${id}`, {token: hub.devToken, headers: {'last-event-id': '0'}})
      await s2.next((x) => x.data.activity === 'waiting_for_input')
      s2.close()
    } finally {
      s.close()
    }
  })
})
