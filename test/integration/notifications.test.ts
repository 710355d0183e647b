import {createHmac} from 'node:crypto'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import pino from 'pino'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub, type Hub} from '../../src/main.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect, pgAvailable} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'

interface Received {
  headers: http.IncomingHttpHeaders
  raw: string
  body: any
}

/** A webhook receiver on loopback: answers each POST with the next status of `answers` (then 200). */
async function receiver(answers: number[] = []) {
  const got: Received[] = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (raw += c))
    req.on('end', () => {
      got.push({headers: req.headers, raw, body: JSON.parse(raw)})
      res.writeHead(answers.shift() ?? 200).end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {got, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => new Promise<void>((r) => server.close(() => r()))}
}

const setChannels = (hub: FakeBrokerHub, channels: unknown[]) => hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {notification_channels: channels}}})

describeEachDialect('notification channels (webhooks)', (dialect) => {
  let hub: FakeBrokerHub
  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
  })
  afterAll(() => hub?.dispose())
  /**
   * A running agent whose start (activity `idle`, itself a default event) this Hub's feed has
   * already passed: a channel set afterwards hears only the reports of the test.
   */
  const create = async (name: string) => {
    const agent = (await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name, harnessConfig: 'shell'}})).body.agent as {id: string; projectId: string}
    const seq = await hub.store.agentEvents.latestSeq()
    await waitFor(() => hub.services.agentFeed.position() >= seq, 10_000, 'the feed past the start')
    return agent
  }
  const report = (id: string, body: Record<string, unknown>) => hub.request('POST', `/api/v1/agents/${id}/status`, {token: hub.tokenOf(id), body})

  it('refuses a channel that is not a webhook with a URL, and changes nothing', async () => {
    const before = (await hub.request('GET', '/api/v1/admin/server-config')).body.server.notification_channels
    for (const bad of [{type: 'email', url: 'http://x'}, {type: 'webhook'}, {type: 'webhook', url: 'ftp://x'}, {type: 'webhook', url: 'http://x', events: ['sleeping']}]) {
      const r = await setChannels(hub, [bad])
      expect(r.status, JSON.stringify(bad)).toBe(400)
      expect(r.body.error.code).toBe('validation_failed')
    }
    expect((await hub.request('GET', '/api/v1/admin/server-config')).body.server.notification_channels).toEqual(before)
  })

  it('POSTs the signed event once; a 500 is retried with the same body; admin status counts it', async () => {
    const rx = await receiver([500])
    try {
      const a = await create('hook-one')
      expect((await setChannels(hub, [{type: 'webhook', url: rx.url, secret: 'sh-secret', allow_private: true}])).status).toBe(200)
      await report(a.id, {activity: 'waiting_for_input', detail: 'Allow Bash: npm publish?'})
      await waitFor(() => rx.got.length >= 2, 15_000, 'a retry after the 500')
      const [first, second] = rx.got
      expect(second.raw).toBe(first.raw)
      for (const r of rx.got) expect(r.headers['x-svc-signature']).toBe('sha256=' + createHmac('sha256', 'sh-secret').update(r.raw).digest('hex'))
      expect(second.body).toMatchObject({
        event: 'waiting_for_input',
        agent: {id: a.id, name: 'hook-one', projectId: a.projectId, phase: 'running', activity: 'waiting_for_input', detail: 'Allow Bash: npm publish?'},
        at: expect.any(String),
      })
      expect(second.body.hub).toHaveProperty('name')
      expect(second.body.text).toContain('hook-one')
      expect(second.body.text).toContain('needs your input')
      // idle is a default event; thinking is not.
      await report(a.id, {activity: 'thinking'})
      await report(a.id, {activity: 'idle'})
      await waitFor(() => rx.got.length >= 3, 15_000, 'the idle event')
      expect(rx.got.map((r) => r.body.event)).toEqual(['waiting_for_input', 'waiting_for_input', 'idle'])
      const status = (await hub.request('GET', '/api/v1/admin/status')).body
      expect(status.notifications.deliveries.delivered).toBeGreaterThanOrEqual(2)
    } finally {
      await setChannels(hub, [])
      await rx.close()
    }
  })

  it('a channel that keeps failing shows in admin status with its error; no signature without a secret', async () => {
    const rx = await receiver([503, 503, 503, 503, 503, 503])
    try {
      const a = await create('hook-fail')
      await setChannels(hub, [{type: 'webhook', url: rx.url, events: ['completed'], allow_private: true}])
      await report(a.id, {activity: 'completed', detail: 'done'})
      await waitFor(() => rx.got.length >= 1, 15_000, 'the first attempt')
      expect(rx.got[0].headers['x-svc-signature']).toBeUndefined()
      const problems = await waitFor(async () => {
        const p = (await hub.request('GET', '/api/v1/admin/status')).body.notifications.problems as Array<{agentId: string; lastError: string; url: string}>
        return p.find((x) => x.agentId === a.id)
      })
      expect(problems).toMatchObject({url: rx.url, lastError: expect.stringContaining('HTTP 503')})
    } finally {
      await setChannels(hub, [])
      await rx.close()
    }
  })
})

/** Two Hubs on one PostgreSQL database: each event is delivered by one of them, once. */
describe.skipIf(!(await pgAvailable()))('notification channels across replicas [postgres]', () => {
  let hub: FakeBrokerHub
  let other: Hub
  beforeAll(async () => {
    hub = await startFakeBrokerHub('postgres')
    const env = {...hub.env}
    const bootstrap = resolveBootstrap({port: 0}, env)
    bootstrap.values['server.broker.enabled'] = false
    other = await createHub(bootstrap, {env, logger: pino({level: 'silent'})})
  })
  afterAll(async () => {
    await other?.close()
    await hub?.dispose()
  })

  it('delivers each event exactly once', async () => {
    const rx = await receiver()
    try {
      // Made first, and both feeds past its start (activity idle, a default event): only the
      // reports below are heard.
      const r = await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name: 'hook-once', harnessConfig: 'shell'}})
      const id = r.body.agent.id
      const started = await hub.store.agentEvents.latestSeq()
      await waitFor(() => hub.services.agentFeed.position() >= started && other.services.agentFeed.position() >= started, 10_000, 'both feeds past the start')
      await setChannels(hub, [{type: 'webhook', url: rx.url, allow_private: true}])
      // The other replica follows the settings change before the event.
      await waitFor(() => ((other.services.settings!.resolved() as any).server?.notification_channels ?? []).length === 1, 10_000, 'replica settings')
      for (const activity of ['waiting_for_input', 'thinking', 'idle', 'thinking', 'waiting_for_input']) {
        await hub.request('POST', `/api/v1/agents/${id}/status`, {token: hub.tokenOf(id), body: {activity}})
        await waitFor(async () => (await hub.store.agentEvents.since(0, 1000)).some((e) => e.agentId === id && e.activity === activity && e.seq > 0), 10_000, activity)
      }
      await waitFor(() => rx.got.filter((g) => g.body.agent.id === id).length >= 3, 15_000, 'three deliveries')
      const rows = await waitFor(async () => {
        const all = (await hub.store.agentEvents.deliveries()).filter((d) => d.agentId === id)
        return all.length === 3 && all.every((d) => d.status === 'delivered') ? all : null
      })
      expect(rows.every((d) => d.attempts === 1)).toBe(true)
      // Both replicas have read every event by now; nothing more may arrive.
      await waitFor(() => other.services.agentFeed.position() >= hub.services.agentFeed.position(), 10_000, 'replica caught up')
      await new Promise((r) => setTimeout(r, 1500))
      expect(rx.got.filter((g) => g.body.agent.id === id).map((g) => g.body.event)).toEqual(['waiting_for_input', 'idle', 'waiting_for_input'])
    } finally {
      await setChannels(hub, [])
      await rx.close()
    }
  })
})
