import {afterAll, beforeAll, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'

/**
 * A report from an agent whose session the broker does not hold cannot set it running again.
 * The broker reconnects without the agent's session (lost in a crash or a reboot): the Hub marks
 * the agent stopped and revokes its tokens, but the process may live on somewhere with one. Its
 * reports are refused (401) and change nothing. A credential that still resolves for a stopped
 * agent (one minted while a revocation was on its way) meets the second guard: its reports,
 * phase or activity or a bare heartbeat, are refused with 409 `agent_not_running`.
 */
describeEachDialect('status reports of an agent with no session', (dialect) => {
  let hub: FakeBrokerHub
  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
  })
  afterAll(() => hub?.dispose())
  const get = async (id: string) => (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent

  it('a lost agent\'s old token is refused (401); a live credential of a stopped agent gets 409 agent_not_running; it stays stopped', async () => {
    const {id} = (await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name: 'ghost', harnessConfig: 'shell'}})).body.agent
    const token = hub.tokenOf(id)
    const report = (body: Record<string, unknown>) => hub.request('POST', `/api/v1/agents/${id}/status`, {token, body})
    // Control: while it runs, its reports are taken.
    expect((await report({activity: 'thinking', detail: 'working'})).status).toBe(200)
    expect(await get(id)).toMatchObject({phase: 'running', activity: 'thinking', detail: 'working'})

    // The broker comes back without the agent's session: the Hub stops the agent and revokes its token.
    await hub.fake.close()
    await hub.fake.connect({agents: []})
    await waitFor(async () => (await get(id)).phase === 'stopped', 10_000, 'the agent marked stopped')
    const before = await get(id)
    const events = (await hub.store.agentEvents.since(0, 10_000)).filter((e) => e.agentId === id).length

    const bodies = [{phase: 'running'}, {phase: 'running', activity: 'executing', detail: 'I am back'}, {activity: 'waiting_for_input', detail: 'approve me'}, {heartbeat: true}, {}]
    for (const body of bodies) {
      const r = await report(body)
      expect(r.status, JSON.stringify(body)).toBe(401)
      expect(r.body.error.code).toBe('unauthorized')
    }
    // A credential that still resolves (minted as a revocation was on its way) is refused by the phase.
    const {token: live} = await hub.services.agentTokens.mint({id, role: 'full'})
    for (const body of bodies) {
      const r = await hub.request('POST', `/api/v1/agents/${id}/status`, {token: live, body})
      expect(r.status, JSON.stringify(body)).toBe(409)
      expect(r.body.error).toMatchObject({code: 'agent_not_running', details: {phase: 'stopped'}})
    }
    expect(await get(id)).toEqual(before)
    const stored = await hub.store.agents.get(id)
    expect({phase: stored?.phase, activity: stored?.activity, lastHeartbeatAt: stored?.lastHeartbeatAt}).toEqual({phase: 'stopped', activity: null, lastHeartbeatAt: before.lastHeartbeatAt})
    expect((await hub.store.agentEvents.since(0, 10_000)).filter((e) => e.agentId === id)).toHaveLength(events)

    // Started again by a person, the agent's new session reports as before.
    expect((await hub.request('POST', `/api/v1/agents/${id}/start`)).body.agent.phase).toBe('running')
    const fresh = hub.tokenOf(id)
    expect((await hub.request('POST', `/api/v1/agents/${id}/status`, {token: fresh, body: {activity: 'executing', detail: 'again'}})).status).toBe(200)
    expect(await get(id)).toMatchObject({phase: 'running', activity: 'executing', detail: 'again'})
  })

  it('a person may still report on a stopped agent (only agent credentials need a live session)', async () => {
    const {id} = (await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name: 'ghost-two', harnessConfig: 'shell'}})).body.agent
    expect((await hub.request('POST', `/api/v1/agents/${id}/stop`)).body.agent.phase).toBe('stopped')
    expect((await hub.request('POST', `/api/v1/agents/${id}/status`, {body: {detail: 'noted by a person'}})).status).toBe(200)
    expect(await get(id)).toMatchObject({phase: 'stopped', detail: 'noted by a person'})
  })
})
