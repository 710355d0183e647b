import {Writable} from 'node:stream'
import pino from 'pino'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {signRequest} from '../../src/api/broker-signing.js'
import {KEYS_ROUTE, PROJECT_KEYS_ROUTE} from '../../src/api/raw-input.js'
import {iso} from '../../src/domain/shared/clock.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {createUser} from '../helpers/users.js'

/**
 * Raw input removed on every message ingress (spec: Errors / Raw message removal, Events 3 and
 * 5): a `raw` field at the top level or inside `message`/`structured_message`, in any
 * capitalisation and with any value (or in a body that is not JSON at all), is 422
 * raw_input_removed with operation_id, ingress and replacement; it writes one content-free log
 * line and nothing else, and nothing reaches the broker or the agent's terminal.
 */

const SECRET = 'secret-text-7f3a' // the message text: never in a log line, never in the pane
const NAMES = ['raw', 'RAW', 'Raw', 'rAw']
const POSITIONS = ['top', 'message', 'structured_message'] as const
const VALUES: Array<[string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
  ['number', 42],
  ['string', 'echo pwned\r'],
  ['object', {keys: 'C-c'}],
  ['array', ['a', 'b']],
]

describeEachDialect('raw input removed on every ingress', (dialect) => {
  let hub: LiveHub
  const logLines: Array<Record<string, unknown>> = []
  const logText: string[] = []
  const dispatched: Array<{method: string; params: unknown}> = []
  const brokerCalls: string[] = []
  let agent: {id: string; projectId: string}
  let otherProject: string
  let otherAgent: {id: string}
  let brokerId: string
  let brokerSecret: string
  let localUrl: string

  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        logText.push(line)
        try {
          logLines.push(JSON.parse(line))
        } catch {
          // not JSON
        }
      }
      done()
    },
  })

  beforeAll(async () => {
    hub = await startLiveHub(dialect, {logger: pino({level: 'info'}, stream)})
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'demo', projectId: 'default', harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    agent = r.body.agent
    otherProject = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'elsewhere'}})).body.project.id
    otherAgent = (await hub.request('POST', '/api/v1/agents', {body: {name: 'far', projectId: otherProject, harnessConfig: 'shell'}})).body.agent
    brokerId = hub.brokerId!
    brokerSecret = hub.colocated!.broker.opts.secret
    localUrl = hub.colocated!.localUrl!
    expect(localUrl).toBeTruthy()
    // Record, then pass on, everything the Hub sends to brokers and everything the broker runs.
    const request = hub.tunnels.request.bind(hub.tunnels)
    hub.tunnels.request = (<T>(id: string, method: string, params: unknown, timeoutMs?: number) => {
      dispatched.push({method, params})
      return request<T>(id, method, params, timeoutMs)
    }) as typeof hub.tunnels.request
    const broker = hub.colocated!.broker
    const run = broker.request.bind(broker)
    broker.request = (method, params) => {
      brokerCalls.push(method)
      return run(method, params)
    }
  })
  afterAll(() => hub?.dispose())

  type Ingress = {ingress: string; replacement: string; send: (payload: string) => Promise<{status: number; body: any}>; base: () => Record<string, unknown>}

  const inject = async (url: string, payload: string, headers: Record<string, string> = {authorization: `Bearer ${hub.devToken}`}) => {
    const res = await hub.app.inject({method: 'POST', url, headers: {'content-type': 'application/json', ...headers}, payload})
    return {status: res.statusCode, body: res.json()}
  }
  const signed = (url: string, payload: string) => inject(url, payload, signRequest(brokerId, brokerSecret, 'POST', url, payload))
  const sender = () => ({kind: 'user', id: 'dev-user'})

  const ingresses = (): Ingress[] => [
    {ingress: 'agent_message', replacement: KEYS_ROUTE, send: (p) => inject(`/api/v1/agents/${agent.id}/message`, p), base: () => ({message: SECRET})},
    {ingress: 'project_agent_message', replacement: PROJECT_KEYS_ROUTE, send: (p) => inject(`/api/v1/projects/default/agents/demo/message`, p), base: () => ({message: SECRET})},
    {ingress: 'project_broadcast', replacement: KEYS_ROUTE, send: (p) => inject(`/api/v1/projects/default/broadcast`, p), base: () => ({message: SECRET})},
    {ingress: 'broker_inbound', replacement: KEYS_ROUTE, send: (p) => signed('/api/v1/broker/inbound', p), base: () => ({topic: `agent.${agent.id}`, sender: sender(), message: SECRET})},
    {ingress: 'broker_inbound_routed', replacement: KEYS_ROUTE, send: (p) => signed('/api/v1/broker/inbound/routed', p), base: () => ({agentId: agent.id, sender: sender(), message: SECRET})},
    {ingress: 'scheduled_event', replacement: KEYS_ROUTE, send: (p) => inject(`/api/v1/projects/default/scheduled-events`, p), base: () => ({agent: 'demo', at: iso(new Date(Date.now() + 3_600_000)), message: SECRET})},
    {ingress: 'schedule', replacement: KEYS_ROUTE, send: (p) => inject(`/api/v1/projects/default/schedules`, p), base: () => ({agent: 'demo', every: '1h', message: SECRET})},
    {
      ingress: 'runtime_broker_message',
      replacement: KEYS_ROUTE,
      send: async (p) => {
        const path = `/api/v1/agents/${agent.id}/message`
        const res = await fetch(new URL(path, localUrl), {method: 'POST', headers: {'content-type': 'application/json', ...signRequest(brokerId, brokerSecret, 'POST', path, p)}, body: p})
        return {status: res.status, body: await res.json()}
      },
      base: () => ({message: SECRET}),
    },
  ]

  function withRaw(base: Record<string, unknown>, name: string, position: (typeof POSITIONS)[number], value: unknown) {
    const body = {...base}
    if (position === 'top') body[name] = value
    else {
      delete body.message
      body[position] = {text: SECRET, [name]: value}
    }
    return JSON.stringify(body)
  }

  const writes = async () => ({messages: await hub.store.messages.count(), schedules: await hub.store.messages.countSchedules(), audit: (await hub.store.audit.list()).length})

  /** Sends one payload and checks the refusal, its log line and that nothing happened. */
  async function expectRefused(i: Ingress, payload: string, replacement = i.replacement) {
    const before = await writes()
    const lines = logLines.length
    const text = logText.length
    const d = dispatched.length
    const b = brokerCalls.length
    const r = await i.send(payload)
    expect(r.status, `${i.ingress} ${payload}`).toBe(422)
    expect(r.body.error.code).toBe('raw_input_removed')
    expect(r.body.error.details).toEqual({operation_id: expect.stringMatching(/^op_[0-9a-f]+$/), ingress: i.ingress, replacement})
    expect(r.body.error.details.replacement).not.toContain(agent.id)
    // The local API's logger is asynchronous only in name; give it a tick.
    await new Promise((res) => setImmediate(res))
    const refusals = logLines.slice(lines).filter((l) => l.route === 'message_raw_removed')
    expect(refusals, `${i.ingress} log line`).toHaveLength(1)
    expect(refusals[0]).toMatchObject({route: 'message_raw_removed', ingress: i.ingress, operation_id: r.body.error.details.operation_id})
    for (const line of logText.slice(text)) {
      expect(line).not.toContain(SECRET)
      expect(line).not.toContain('pwned')
    }
    expect(await writes()).toEqual(before)
    expect(dispatched.length).toBe(d)
    expect(brokerCalls.length).toBe(b)
  }

  it('the agent is running on the co-located broker (so a dispatch would be seen)', async () => {
    expect((await hub.request('GET', `/api/v1/agents/${agent.id}`)).body.agent.phase).toBe('running')
    expect(hub.tunnels.isConnected(brokerId)).toBe(true)
  })

  it('every ingress x capitalisation x position x value: 422, details, one log line, nothing written or dispatched', async () => {
    let n = 0
    for (const i of ingresses()) {
      for (const name of NAMES) for (const position of POSITIONS) for (const [, value] of VALUES) {
        await expectRefused(i, withRaw(i.base(), name, position, value))
        n++
      }
    }
    expect(n).toBe(8 * 4 * 3 * 7)
  }, 240_000)

  it('every ingress: a malformed JSON body holding a raw key is refused the same way', async () => {
    for (const i of ingresses()) {
      const valid = JSON.stringify(i.base())
      for (const bad of [valid.slice(0, -1) + ',"raw": tru}', valid.slice(0, -1) + ',"RAW":', `{"message":{"text":"${SECRET}","Raw":]}`]) await expectRefused(i, bad)
    }
  })

  it('a body sent as text/plain holding a raw key is refused the same way (user ingresses)', async () => {
    for (const i of ingresses().filter((x) => !x.ingress.startsWith('broker') && x.ingress !== 'runtime_broker_message')) {
      const url = {agent_message: `/api/v1/agents/${agent.id}/message`, project_agent_message: '/api/v1/projects/default/agents/demo/message', project_broadcast: '/api/v1/projects/default/broadcast', scheduled_event: '/api/v1/projects/default/scheduled-events', schedule: '/api/v1/projects/default/schedules'}[i.ingress]!
      await expectRefused({...i, send: (p) => inject(url, p, {authorization: `Bearer ${hub.devToken}`, 'content-type': 'text/plain'})}, withRaw(i.base(), 'Raw', 'top', true))
    }
  })

  it('unknown target: 404 before raw on both agent message routes', async () => {
    const raw = JSON.stringify({message: SECRET, raw: true})
    const lines = logLines.length
    for (const url of ['/api/v1/agents/no-such-agent/message', '/api/v1/projects/default/agents/no-such-agent/message', '/api/v1/projects/no-such-project/agents/demo/message', `/api/v1/projects/${otherProject}/agents/demo/message`]) {
      const r = await inject(url, raw)
      expect(r.status, url).toBe(404)
      expect(r.body.error.code).toBe('not_found')
    }
    // A 404 is not a refusal of raw input: no refusal line.
    expect(logLines.slice(lines).filter((l) => l.route === 'message_raw_removed')).toEqual([])
  })

  it('raw is refused before message authorization, whatever the caller: another project\'s agent, an agent without the notify scope, a non-member, a member', async () => {
    const {token: foreignAgent} = await hub.services.agentTokens.mint({id: otherAgent.id, role: 'full'})
    const {token: unscoped} = await hub.services.agentTokens.mint({id: agent.id, role: 'readonly'})
    const {token: noneRole} = await hub.services.agentTokens.mint({id: agent.id, role: 'none'})
    const outsider = await createUser(hub)
    const member = await createUser(hub)
    await hub.store.projects.setMember(agent.projectId, member.user.id, 'member', iso(new Date()))
    const all = ingresses()
    for (const token of [foreignAgent, unscoped, noneRole, outsider.token, member.token]) {
      for (const i of all.slice(0, 2)) {
        const url = i.ingress === 'agent_message' ? `/api/v1/agents/${agent.id}/message` : '/api/v1/projects/default/agents/demo/message'
        await expectRefused({...i, send: (p) => inject(url, p, {authorization: `Bearer ${token}`})}, JSON.stringify({message: SECRET, Raw: false}))
      }
      // The same callers without raw are refused by authorization (the member would be accepted).
      if (token === member.token) continue
      const plain = await inject(`/api/v1/agents/${agent.id}/message`, JSON.stringify({message: 'authz probe'}), {authorization: `Bearer ${token}`})
      expect([403, 404]).toContain(plain.status)
    }
    // Without credentials at all: 401 (the caller must be authenticated).
    const anon = await hub.app.inject({method: 'POST', url: `/api/v1/agents/${agent.id}/message`, headers: {'content-type': 'application/json'}, payload: JSON.stringify({message: SECRET, raw: true})})
    expect(anon.statusCode).toBe(401)
  })

  it('broker ingress: raw before topic validation and sender resolution', async () => {
    const [inbound, routed] = ingresses().slice(3, 5)
    await expectRefused(inbound, JSON.stringify({topic: 'nonsense topic!', sender: sender(), message: SECRET, raw: true}))
    await expectRefused(inbound, JSON.stringify({message: SECRET, RAW: 1}))
    await expectRefused(inbound, JSON.stringify({topic: `agent.${agent.id}`, sender: {kind: 'user', id: 'nobody'}, message: {text: SECRET, raw: null}}))
    await expectRefused(routed, JSON.stringify({agentId: 'no-such-agent', sender: {kind: 'robot', id: 'x'}, structured_message: {text: SECRET, rAw: 'x'}}))
    // Without raw the same bodies are judged on their topic and sender.
    expect((await signed('/api/v1/broker/inbound', JSON.stringify({topic: 'nonsense topic!', sender: sender(), message: 'x'}))).body.error.code).toBe('invalid_topic')
    expect((await signed('/api/v1/broker/inbound', JSON.stringify({topic: `agent.${agent.id}`, sender: {kind: 'user', id: 'nobody'}, message: 'x'}))).body.error.code).toBe('unknown_sender')
  })

  it('after all refusals: no message or schedule row, nothing sent to the broker, nothing typed in the pane', async () => {
    expect(await hub.store.messages.count()).toBe(0)
    expect(await hub.store.messages.countSchedules()).toBe(0)
    expect(dispatched.filter((d) => d.method === 'agent.message' || d.method === 'agent.keys')).toEqual([])
    expect(brokerCalls.filter((m) => m === 'agent.message' || m === 'agent.keys')).toEqual([])
    const pane = hub.tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout
    expect(pane).not.toContain(SECRET)
    expect(pane).not.toContain('pwned')
  })

  it('control: the same ingress without raw is accepted, stored and dispatched (the recorders see it)', async () => {
    const r = await inject(`/api/v1/agents/${agent.id}/message`, JSON.stringify({message: 'echo control-ok'}))
    expect(r.status).toBe(202)
    expect(r.body).toEqual({messageId: expect.any(String)})
    await waitFor(() => dispatched.some((d) => d.method === 'agent.message'), 10_000, 'dispatch')
    await waitFor(() => brokerCalls.includes('agent.message'), 10_000, 'the broker ran it')
    expect(await hub.store.messages.count()).toBe(1)
    await waitFor(() => /^control-ok$/m.test(hub.tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout), 10_000, 'the message ran in the pane')
  })
})
