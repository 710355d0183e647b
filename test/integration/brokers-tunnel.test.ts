import WebSocket from 'ws'
import {afterAll, afterEach, beforeAll, expect, it} from 'vitest'
import {SIGNATURE_HEADERS, signRequest} from '../../src/api/broker-signing.js'
import {TUNNEL_PATH} from '../../src/api/tunnel-protocol.js'
import {describeEachDialect} from '../helpers/hub.js'
import {FakeBroker, startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * The broker tunnel, driven by hand: the Hub refuses unsigned upgrades, commands a broker only
 * through its tunnel, marks it offline when the tunnel drops, and reconciles a broker's hello.
 */
describeEachDialect('brokers: the tunnel', (dialect) => {
  let hub: LiveHub
  let projectId: string
  const open: FakeBroker[] = []

  beforeAll(async () => {
    hub = await startLiveHub(dialect, {broker: false})
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'tunnelled'}})).body.project.id
  })
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close()
  })
  afterAll(() => hub?.dispose())

  async function joined(name: string): Promise<FakeBroker> {
    const r = await hub.request('POST', '/api/v1/brokers/register', {body: {name}})
    const j = await hub.request('POST', '/api/v1/brokers/join', {body: {joinToken: r.body.joinToken}, token: null})
    const b = new FakeBroker(hub.url, j.body.brokerId, j.body.secret)
    open.push(b)
    return b
  }
  const broker = async (id: string) => (await hub.request('GET', `/api/v1/brokers/${id}`)).body.broker
  const create = (body: Record<string, unknown>) => hub.request('POST', '/api/v1/agents', {body: {projectId, harnessConfig: 'shell', ...body}})

  function upgradeStatus(headers: Record<string, string>): Promise<number> {
    const url = new URL(TUNNEL_PATH, hub.url)
    url.protocol = 'ws:'
    return new Promise((resolve) => {
      const ws = new WebSocket(url, {headers})
      ws.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0)
        ws.terminate()
      })
      ws.on('open', () => {
        resolve(101)
        ws.close()
      })
      ws.on('error', () => {})
    })
  }

  it('the tunnel upgrade is refused (401) unsigned, badly signed or from an unknown broker', async () => {
    const b = await joined('edge-upgrade')
    expect(await upgradeStatus({})).toBe(401)
    const bad = signRequest(b.brokerId, b.secret, 'GET', TUNNEL_PATH, '')
    bad[SIGNATURE_HEADERS.signature] = '0'.repeat(64)
    expect(await upgradeStatus(bad)).toBe(401)
    expect(await upgradeStatus(signRequest(b.brokerId, 'svc_brk_wrong', 'GET', TUNNEL_PATH, ''))).toBe(401)
    expect(await upgradeStatus(signRequest('no-such-broker', b.secret, 'GET', TUNNEL_PATH, ''))).toBe(401)
    expect(await upgradeStatus(signRequest(b.brokerId, b.secret, 'GET', TUNNEL_PATH, '', {now: Date.now() - 600_000}))).toBe(401)
    expect(await upgradeStatus(signRequest(b.brokerId, b.secret, 'GET', TUNNEL_PATH, ''))).toBe(101)
  })

  it('a connected broker is online with its capabilities; dispatch reaches it only through its tunnel, with the agent environment', async () => {
    const b = await joined('edge-a')
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).status === 'online', 5000, 'broker online')
    expect(await broker(b.brokerId)).toMatchObject({connected: true, capabilities: ['agents', 'logs', 'attach'], runtimes: ['local'], version: '1'})

    const r = await create({name: 'via-tunnel', brokerId: b.brokerId, task: 'say hi'})
    expect(r.status).toBe(201)
    expect(r.body.agent).toMatchObject({name: 'via-tunnel', brokerId: b.brokerId, phase: 'running', runtime: 'local', createdBy: {kind: 'user', id: 'dev-user'}})
    const [start] = b.requests('agent.start')
    expect(start.params).toMatchObject({agentId: r.body.agent.id, name: 'via-tunnel', projectId, harnessConfig: 'shell', task: 'say hi'})
    const env = (start.params as {env: Record<string, string>}).env
    // PORT / SVC_PORTS: the agent's block of ports on its broker (environments.md).
    expect(env).toEqual({SVC_AUTH_TOKEN: expect.stringMatching(/^svc_agt_/), SVC_AGENT_ID: r.body.agent.id, SVC_AGENT_NAME: 'via-tunnel', SVC_PROJECT_ID: projectId, PORT: expect.stringMatching(/^\d+$/), SVC_PORTS: expect.stringMatching(/^\d+-\d+$/)})
    expect(env.SVC_PORTS.split('-').map(Number)).toEqual([Number(env.PORT), Number(env.PORT) + 9])
    expect((await broker(b.brokerId)).agents).toBe(1)

    // The token handed to the broker is the agent's own credential.
    const me = await hub.request('GET', '/api/v1/auth/me', {token: env.SVC_AUTH_TOKEN})
    expect(me.body).toMatchObject({principal: {kind: 'agent', id: r.body.agent.id, projectId}, credentialKind: 'agent'})
  })

  it('a requested broker that is not connected is 503 broker_unavailable; an unknown one 404; with no broker online 503', async () => {
    const b = await joined('edge-idle')
    const r = await create({name: 'nowhere', brokerId: b.brokerId})
    expect(r.status).toBe(503)
    expect(r.body.error.code).toBe('broker_unavailable')
    expect((await create({name: 'nowhere', brokerId: 'no-such-broker'})).status).toBe(404)
    const none = await create({name: 'nowhere'})
    expect(none.status).toBe(503)
    expect(none.body.error).toMatchObject({code: 'broker_unavailable', message: expect.stringMatching(/svc broker start/)})
    // Nothing was recorded for the refused creates.
    expect((await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents.map((a: {name: string}) => a.name)).not.toContain('nowhere')
  })

  it('without a requested broker the project\'s default broker is chosen while it is connected', async () => {
    const b = await joined('edge-default')
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    await hub.store.projects.update(projectId, {defaultBrokerId: b.brokerId}, new Date().toISOString())
    try {
      const r = await create({name: 'defaulted'})
      expect(r.status).toBe(201)
      expect(r.body.agent.brokerId).toBe(b.brokerId)
      expect(b.requests('agent.start')).toHaveLength(1)
      await b.close()
      await waitFor(async () => !(await broker(b.brokerId)).connected, 5000, 'broker disconnected')
      // Offline default and no other broker of the Hub: 503.
      expect((await create({name: 'defaulted-2'})).status).toBe(503)
    } finally {
      await hub.store.projects.update(projectId, {defaultBrokerId: null}, new Date().toISOString())
    }
  })

  it('when the tunnel drops the broker goes offline and creates on it answer 503', async () => {
    const b = await joined('edge-drop')
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    await b.close()
    await waitFor(async () => (await broker(b.brokerId)).status === 'offline', 5000, 'broker offline')
    expect((await broker(b.brokerId)).connected).toBe(false)
    const r = await create({name: 'after-drop', brokerId: b.brokerId})
    expect(r.status).toBe(503)
    expect(r.body.error.code).toBe('broker_unavailable')
  })

  it('a broker error at start leaves the agent in phase error with the reason', async () => {
    const b = await joined('edge-fails')
    b.answer = (method) => {
      if (method === 'agent.start') throw new Error('no tmux here')
      return {}
    }
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    const r = await create({name: 'doomed', brokerId: b.brokerId})
    expect(r.status).toBe(201)
    expect(r.body.agent).toMatchObject({phase: 'error', error: expect.stringMatching(/no tmux here/)})
  })

  it('reconcile: a hello naming an agent the Hub deleted gets it stopped; a running agent missing from the hello is marked stopped', async () => {
    const b = await joined('edge-reconcile')
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    const gone = (await create({name: 'to-delete', brokerId: b.brokerId})).body.agent
    const lost = (await create({name: 'to-lose', brokerId: b.brokerId})).body.agent
    expect(lost.phase).toBe('running')
    // Delete while the broker is away: the Hub cannot tell it.
    await b.close()
    await waitFor(async () => !(await broker(b.brokerId)).connected, 5000, 'broker disconnected')
    expect((await hub.request('DELETE', `/api/v1/agents/${gone.id}`)).status).toBe(200)

    const again = new FakeBroker(hub.url, b.brokerId, b.secret)
    open.push(again)
    await again.connect({agents: [gone.id]})
    await waitFor(() => again.requests('agent.stop').length > 0, 5000, 'agent.stop for the deleted agent')
    expect(again.requests('agent.stop').map((r) => (r.params as {agentId: string}).agentId)).toEqual([gone.id])
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${lost.id}`)).body.agent.phase === 'stopped', 5000, 'lost agent stopped')
    expect((await hub.request('GET', `/api/v1/agents/${lost.id}`)).body.agent.error).toMatch(/no longer runs/)
  })

  it('reconcile: a session of an agent the Hub holds in phase error (a start answered after the Hub gave up) is stopped', async () => {
    const b = await joined('edge-late-start')
    b.answer = (method) => {
      if (method === 'agent.start') throw new Error('timed out')
      return {}
    }
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    const failed = (await create({name: 'late-start', brokerId: b.brokerId})).body.agent
    expect(failed.phase).toBe('error')
    await b.close()
    await waitFor(async () => !(await broker(b.brokerId)).connected, 5000, 'broker disconnected')
    // The broker comes back running that agent after all.
    const again = new FakeBroker(hub.url, b.brokerId, b.secret)
    open.push(again)
    await again.connect({agents: [failed.id]})
    await waitFor(() => again.requests('agent.stop').length > 0, 5000, 'agent.stop for the agent in error')
    expect(again.requests('agent.stop').map((r) => (r.params as {agentId: string}).agentId)).toEqual([failed.id])
    expect((await hub.request('GET', `/api/v1/agents/${failed.id}`)).body.agent.phase).toBe('error')
  })

  it('a liveness report naming a session the Hub does not want (agent in error, deleted, unknown) gets it stopped; the others count as heartbeats', async () => {
    const b = await joined('edge-alive')
    let failStart = true
    b.answer = (method) => {
      if (method === 'agent.start' && failStart) throw new Error('timed out')
      return {runtime: 'local', ref: 'svc-fake'}
    }
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    const failed = (await create({name: 'alive-error', brokerId: b.brokerId})).body.agent
    expect(failed.phase).toBe('error')
    failStart = false
    const fine = (await create({name: 'alive-fine', brokerId: b.brokerId})).body.agent
    expect(fine.phase).toBe('running')
    const before = (await hub.request('GET', `/api/v1/agents/${fine.id}`)).body.agent.lastHeartbeatAt
    b.send({t: 'evt', event: 'alive', data: {agentIds: [failed.id, fine.id, 'no-such-agent']}})
    await waitFor(() => b.requests('agent.stop').length >= 2, 5000, 'agent.stop for the unwanted sessions')
    expect(b.requests('agent.stop').map((r) => (r.params as {agentId: string}).agentId).sort()).toEqual([failed.id, 'no-such-agent'].sort())
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${fine.id}`)).body.agent.lastHeartbeatAt !== before, 5000, 'the heartbeat of the wanted one')
    expect((await hub.request('GET', `/api/v1/agents/${fine.id}`)).body.agent.phase).toBe('running')
  })

  it('reconcile: workspaces the hello names of agents deleted while the broker was away are removed; others are kept', async () => {
    const b = await joined('edge-workspaces')
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    const gone = (await create({name: 'ws-gone', brokerId: b.brokerId})).body.agent
    const kept = (await create({name: 'ws-kept', brokerId: b.brokerId})).body.agent
    await b.close()
    await waitFor(async () => !(await broker(b.brokerId)).connected, 5000, 'broker disconnected')
    expect((await hub.request('DELETE', `/api/v1/agents/${gone.id}`)).status).toBe(200)

    const again = new FakeBroker(hub.url, b.brokerId, b.secret)
    open.push(again)
    // Neither agent runs any more; both left a workspace, and one directory is of no agent the Hub knows.
    await again.connect({agents: [], workspaces: [gone.id, kept.id, 'not-an-agent']})
    await waitFor(() => again.requests('agent.stop').length > 0, 5000, 'agent.stop removing the deleted agent\'s workspace')
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${kept.id}`)).body.agent.phase === 'stopped', 5000, 'kept agent marked stopped')
    const stops = again.requests('agent.stop').map((r) => r.params as {agentId: string; removeWorkspace?: unknown})
    expect(stops).toEqual([{agentId: gone.id, removeWorkspace: expect.any(Object)}])
  })

  it('a broker reporting that an agent ended archives its output and revokes its token', async () => {
    const b = await joined('edge-ends')
    await b.connect()
    await waitFor(async () => (await broker(b.brokerId)).connected, 5000, 'broker connected')
    const r = await create({name: 'short-lived', brokerId: b.brokerId})
    const token = (b.requests('agent.start')[0].params as {env: Record<string, string>}).env.SVC_AUTH_TOKEN
    b.send({t: 'evt', event: 'agent_status', data: {agentId: r.body.agent.id, phase: 'stopped', detail: 'the harness process ended', log: Buffer.from('bye\n').toString('base64')}})
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${r.body.agent.id}`)).body.agent.phase === 'stopped', 5000, 'stopped')
    // Served as screen text; the archive keeps the bytes (?raw=true).
    expect((await hub.request('GET', `/api/v1/agents/${r.body.agent.id}/logs`)).body).toBe('bye')
    expect((await hub.request('GET', `/api/v1/agents/${r.body.agent.id}/logs?raw=true`)).body).toBe('bye\n')
    expect((await hub.request('GET', '/api/v1/auth/me', {token})).status).toBe(401)
  })
})
