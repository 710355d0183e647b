import {lookup} from 'node:dns/promises'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {hostname} from 'node:os'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {validateSettingsText} from '../../src/config/settings-validate.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'

/** A webhook receiver on 127.0.0.1: what it got, by agent ID. */
async function receiver() {
  const got: Array<{host: string; body: any}> = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (raw += c))
    req.on('end', () => {
      got.push({host: req.headers.host ?? '', body: JSON.parse(raw)})
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {got, port, url: `http://127.0.0.1:${port}/hook`, close: () => new Promise<void>((r) => server.close(() => r()))}
}

/** URLs on loopback, private, link-local, CGNAT and unspecified addresses, spelled many ways. */
const PRIVATE_URLS = [
  'http://127.0.0.1:9/hook',
  'http://127.1.2.3/hook',
  'http://2130706433/hook', // 127.0.0.1 as one number
  'http://0x7f.1/hook', // 127.0.0.1 in hex and short form
  'http://10.0.0.1/hook',
  'http://172.16.0.1/hook',
  'http://172.31.255.254/hook',
  'http://192.168.1.10/hook',
  'http://169.254.169.254/latest/meta-data/', // a cloud metadata endpoint
  'http://100.64.0.1/hook',
  'http://0.0.0.0:9810/api/v1/agents',
  'https://[::1]/hook',
  'http://[::]/hook',
  'http://[fe80::1]/hook',
  'http://[fc00::1]/hook',
  'http://[fd12:3456::1]/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://[::ffff:a9fe:a9fe]/hook', // ::ffff:169.254.169.254
  'http://localhost:9810/api/v1/auth/dev-session',
  'http://LOCALHOST./hook',
  'http://hub.localhost/hook',
]

/** Public-looking targets (just outside each refused range included). */
const PUBLIC_URLS = ['https://hooks.example.com/services/T0/B0/x', 'http://203.0.113.7/hook', 'http://172.32.0.1/hook', 'http://100.128.0.1/hook', 'http://[2001:db8::1]/hook', 'http://localhost.example.com/hook']

/**
 * Webhook targets (CONTRACT "Isolation", last bullet). An agent shares the Hub's host and
 * network: a channel pointed at loopback, the LAN or a metadata endpoint would make the Hub
 * POST there for it (the dev-session route, the broker's local API, PostgreSQL's neighbours).
 * Saving such a channel is refused (422 `validation_failed`) unless it sets `allow_private:
 * true`, and a name that resolves to such an address is refused when the Hub delivers.
 */
describeEachDialect('attack: webhook targets on loopback, link-local and private addresses', (dialect) => {
  let hub: FakeBrokerHub
  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
  })
  afterAll(() => hub?.dispose())
  const channels = async () => (await hub.request('GET', '/api/v1/admin/server-config')).body.server.notification_channels ?? []
  const setChannels = (list: unknown[], token?: string) => hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {notification_channels: list}}, ...(token && {token})})
  const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name, harnessConfig: 'shell'}})).body.agent as {id: string}
  const report = (id: string, activity: string) => hub.request('POST', `/api/v1/agents/${id}/status`, {token: hub.tokenOf(id), body: {activity}})

  it('a channel on a private address is refused (422 validation_failed) and nothing is saved; public-looking ones are accepted', async () => {
    const before = await channels()
    for (const url of PRIVATE_URLS) {
      const r = await setChannels([{type: 'webhook', url}])
      expect(r.status, url).toBe(422)
      expect(r.body.error.code, url).toBe('validation_failed')
      expect(r.body.error.details.sections.notification_channels, url).toEqual([{key: 'server.notification_channels.0.url', message: expect.stringContaining('allow_private: true')}])
      // Hidden behind a harmless first channel too.
      const second = await setChannels([{type: 'webhook', url: PUBLIC_URLS[0]}, {type: 'webhook', url, allow_private: false}])
      expect(second.status, url).toBe(422)
      expect(second.body.error.details.sections.notification_channels[0].key).toBe('server.notification_channels.1.url')
    }
    expect(await channels()).toEqual(before)
    // Control: what is public-looking is saved as sent.
    for (const url of PUBLIC_URLS) {
      const r = await setChannels([{type: 'webhook', url, events: ['completed']}])
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(200)
      expect(await channels()).toEqual([{type: 'webhook', url, events: ['completed']}])
    }
    await setChannels([])
  })

  it('an agent credential cannot save channels at all', async () => {
    const a = await create('hook-writer')
    const before = await channels()
    const r = await setChannels([{type: 'webhook', url: 'http://127.0.0.1:9/x', allow_private: true}], hub.tokenOf(a.id))
    expect(r.status).toBe(403)
    expect(await channels()).toEqual(before)
  })

  it('control: allow_private: true to a 127.0.0.1 receiver is saved and delivered', async () => {
    const rx = await receiver()
    try {
      expect((await setChannels([{type: 'webhook', url: rx.url, allow_private: true}])).status).toBe(200)
      const a = await create('hook-allowed')
      await report(a.id, 'waiting_for_input')
      await waitFor(() => rx.got.some((g) => g.body.agent.id === a.id), 15_000, 'the delivery')
    } finally {
      await setChannels([])
      await rx.close()
    }
  })

  it('a name that resolves to loopback is not delivered to (checked when sending); allow_private delivers it', async () => {
    // The machine's own name resolves to a loopback address here (/etc/hosts): a name that passes
    // the check when saved, as a rebinding name would, and points at the Hub's host when used.
    const name = hostname()
    const resolved = await lookup(name, {all: true})
    expect(resolved.some((r) => r.address.startsWith('127.')), `${name} resolves to ${JSON.stringify(resolved)}`).toBe(true)
    const rx = await receiver()
    try {
      const url = `http://${name}:${rx.port}/hook`
      expect((await setChannels([{type: 'webhook', url}])).status).toBe(200)
      const a = await create('hook-rebind')
      await report(a.id, 'waiting_for_input')
      const failed = await waitFor(async () => (await hub.store.agentEvents.deliveries()).find((d) => d.agentId === a.id && d.status === 'failed'), 15_000, 'the refused delivery')
      expect(failed.lastError).toMatch(/resolves to a loopback address \(127\./)
      expect(failed.attempts).toBe(1)
      const problems = (await hub.request('GET', '/api/v1/admin/status')).body.notifications.problems as Array<{agentId: string; lastError: string}>
      expect(problems.find((p) => p.agentId === a.id)?.lastError).toContain('allow_private')
      expect(rx.got.filter((g) => g.body.agent.id === a.id)).toEqual([])

      // Control: the same name with allow_private is delivered, to the address it resolved to.
      expect((await setChannels([{type: 'webhook', url, allow_private: true}])).status).toBe(200)
      await report(a.id, 'thinking')
      await report(a.id, 'idle')
      await waitFor(() => rx.got.some((g) => g.body.agent.id === a.id && g.body.event === 'idle'), 15_000, 'the allowed delivery')
      expect(rx.got.find((g) => g.body.agent.id === a.id)!.host).toBe(`${name}:${rx.port}`)
    } finally {
      await setChannels([])
      await rx.close()
    }
  })
})

it('the settings file: a channel on a private address is an error and is not loaded; allow_private loads it', () => {
  const file = (extra: string) => `schema_version: "1"\nserver:\n  notification_channels:\n    - type: webhook\n      url: http://169.254.169.254/hook\n${extra}    - type: webhook\n      url: https://hooks.example.com/x\n`
  const refused = validateSettingsText('settings.yaml', file(''))
  expect(refused.issues.filter((i) => i.severity === 'error')).toEqual([expect.objectContaining({key: 'server.notification_channels.0.url', line: 4, message: expect.stringContaining('link-local address (169.254.169.254)')})])
  expect((refused.tree.server as any).notification_channels).toEqual([{type: 'webhook', url: 'https://hooks.example.com/x'}])
  const allowed = validateSettingsText('settings.yaml', file('      allow_private: true\n'))
  expect(allowed.issues).toEqual([])
  expect((allowed.tree.server as any).notification_channels).toHaveLength(2)
})
