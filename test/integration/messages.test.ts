import {afterAll, beforeAll, expect, it} from 'vitest'
import {signRequest} from '../../src/api/broker-signing.js'
import {iso} from '../../src/domain/shared/clock.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {movableClock} from '../helpers/sign-in-hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Messages to agents on a real co-located broker (shell harness in tmux): delivery as a
 * bracketed paste plus Enter, plain keystrokes, interrupt first; broadcast; message mode;
 * authorization; broker plugin ingress; scheduled events and recurring schedules.
 */
describeEachDialect('messages', (dialect) => {
  let hub: LiveHub
  const clock = movableClock()
  let def: string
  let other: string
  let demo: {id: string; name: string; projectId: string}
  let far: {id: string}
  let member: TestUser
  let outsider: TestUser

  const pane = (id: string) => hub.tmux('capture-pane', '-p', '-t', `=svc-${id}:`).stdout
  const inPane = (id: string, line: string, what = line) =>
    waitFor(() => new RegExp(`^${line}$`, 'm').test(pane(id)), 40_000, what).catch((e) => {
      throw new Error(`${e.message}\n${pane(id)}`)
    })
  const send = (id: string, body: unknown, token: string | null = hub.devToken) => hub.request('POST', `/api/v1/agents/${id}/message`, {token, body})
  const create = async (name: string, projectId: string) => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    return r.body.agent as {id: string; name: string; projectId: string}
  }
  const history = async (id: string) => (await hub.request('GET', `/api/v1/agents/${id}/messages`)).body.messages as Array<Record<string, any>>
  const signed = (path: string, body: unknown) => {
    const payload = JSON.stringify(body)
    return hub.app
      .inject({method: 'POST', url: path, headers: {'content-type': 'application/json', ...signRequest(hub.brokerId!, hub.colocated!.broker.opts.secret, 'POST', path, payload)}, payload})
      .then((r) => ({status: r.statusCode, body: r.json()}))
  }

  beforeAll(async () => {
    hub = await startLiveHub(dialect, {clock})
    def = (await hub.request('GET', '/api/v1/projects/default')).body.project.id
    other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'msg-other'}})).body.project.id
    demo = await create('demo', def)
    far = await create('far', other)
    member = await createUser(hub)
    outsider = await createUser(hub)
    await hub.store.projects.setMember(def, member.user.id, 'member', iso(new Date()))
  })
  afterAll(() => hub?.dispose())

  it('a message is pasted into the running agent and Entered: 202 {messageId}; stored as delivered', async () => {
    const r = await send(demo.id, {message: 'echo hello-by-message'})
    expect(r.status).toBe(202)
    expect(r.body).toEqual({messageId: expect.any(String)})
    await inPane(demo.id, 'hello-by-message')
    await waitFor(async () => (await history(demo.id)).find((m) => m.id === r.body.messageId)?.delivery === 'delivered', 40_000, 'delivered')
    const stored = (await history(demo.id)).find((m) => m.id === r.body.messageId)!
    expect(stored).toMatchObject({agentId: demo.id, projectId: def, sender: {kind: 'user', id: 'dev-user'}, ingress: 'agent_message', body: {text: 'echo hello-by-message', interrupt: false, plain: false}, error: null})
    expect(stored.deliveredAt).toEqual(expect.any(String))
    // The project-scoped route, by slug, and a structured message.
    const s = await hub.request('POST', '/api/v1/projects/default/agents/demo/message', {body: {structured_message: {text: 'echo structured-ok', kind: 'note'}}})
    expect(s.status).toBe(202)
    await inPane(demo.id, 'structured-ok')
    expect((await history(demo.id)).find((m) => m.id === s.body.messageId)).toMatchObject({ingress: 'project_agent_message', body: {text: 'echo structured-ok', structured: {text: 'echo structured-ok', kind: 'note'}}})
  })

  it('plain types the text as keystrokes', async () => {
    const r = await send(demo.id, {message: 'echo plain-typed', plain: true})
    expect(r.status).toBe(202)
    await inPane(demo.id, 'plain-typed')
  })

  it('interrupt sends C-c to a shell agent first: a running sleep 100 stops and the message runs', async () => {
    await send(demo.id, {message: 'sleep 100; echo sleep-finished'})
    await waitFor(() => hub.tmux('list-panes', '-t', `=svc-${demo.id}:`, '-F', '#{pane_current_command}').stdout.trim() === 'sleep', 40_000, 'sleep running')
    const started = Date.now()
    const r = await send(demo.id, {message: 'echo after-interrupt', interrupt: true})
    expect(r.status).toBe(202)
    await inPane(demo.id, 'after-interrupt')
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(pane(demo.id)).not.toMatch(/^sleep-finished$/m)
    expect(hub.tmux('list-panes', '-t', `=svc-${demo.id}:`, '-F', '#{pane_current_command}').stdout.trim()).not.toBe('sleep')
  })

  it('body rules: 400 for no text, both forms, empty text, a non-boolean flag, an unknown field', async () => {
    const before = await hub.store.messages.count()
    for (const body of [{}, {message: 'a', structured_message: {text: 'b'}}, {message: ''}, {message: 5}, {structured_message: {kind: 'x'}}, {message: 'a', plain: 'yes'}, {message: 'a', extra: 1}]) {
      const r = await send(demo.id, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
    }
    expect(await hub.store.messages.count()).toBe(before)
  })

  it('authorization: a non-member 404, a member 202; an agent with agent:notify 202, without it 403, of another project 404', async () => {
    expect((await send(demo.id, {message: 'echo x'}, outsider.token)).status).toBe(404)
    expect((await send(demo.id, {message: 'echo from-member'}, member.token)).status).toBe(202)
    await inPane(demo.id, 'from-member')
    const peer = await create('peer', def)
    const {token: baseline} = await hub.services.agentTokens.mint({id: peer.id, role: 'baseline'})
    const {token: readonly} = await hub.services.agentTokens.mint({id: peer.id, role: 'readonly'})
    const {token: foreign} = await hub.services.agentTokens.mint({id: far.id, role: 'full'})
    const ok = await send(demo.id, {message: 'echo from-agent'}, baseline)
    expect(ok.status).toBe(202)
    await inPane(demo.id, 'from-agent')
    expect((await history(demo.id)).find((m) => m.id === ok.body.messageId)?.sender).toEqual({kind: 'agent', id: peer.id})
    const denied = await send(demo.id, {message: 'echo x'}, readonly)
    expect(denied.status).toBe(403)
    expect((await send(demo.id, {message: 'echo x'}, foreign)).status).toBe(404)
    expect((await hub.request('POST', `/api/v1/projects/${def}/agents/${demo.id}/message`, {token: foreign, body: {message: 'x'}})).status).toBe(404)
    expect((await send(demo.id, {message: 'echo x'}, null)).status).toBe(401)
    expect((await send('no-such-agent', {message: 'echo x'})).status).toBe(404)
  })

  it('message mode closed: 409 message_mode_closed, nothing stored; keys still work; open again accepts', async () => {
    const m = await hub.request('PUT', `/api/v1/agents/${demo.id}/message-mode`, {body: {mode: 'closed'}})
    expect(m.status).toBe(200)
    expect(m.body).toEqual({agentId: demo.id, messageMode: 'closed'})
    const before = await hub.store.messages.count()
    for (const url of [`/api/v1/agents/${demo.id}/message`, '/api/v1/projects/default/agents/demo/message']) {
      const r = await hub.request('POST', url, {body: {message: 'echo closed'}})
      expect(r.status).toBe(409)
      expect(r.body.error.code).toBe('message_mode_closed')
    }
    expect(await hub.store.messages.count()).toBe(before)
    const k = await hub.request('POST', `/api/v1/agents/${demo.id}/keys`, {body: {keys: 'echo keys-while-closed\r'}})
    expect(k.status).toBe(200)
    await inPane(demo.id, 'keys-while-closed')
    // A member may not change the mode (agent.set_message_mode), the creator may.
    expect((await hub.request('PUT', `/api/v1/agents/${demo.id}/message-mode`, {token: outsider.token, body: {mode: 'open'}})).status).toBe(404)
    expect((await hub.request('PUT', `/api/v1/agents/${demo.id}/message-mode`, {body: {mode: 'sideways'}})).status).toBe(400)
    expect((await hub.request('PUT', '/api/v1/projects/default/agents/demo/message-mode', {body: {mode: 'open'}})).body.messageMode).toBe('open')
    expect((await send(demo.id, {message: 'echo open-again'})).status).toBe(202)
    await inPane(demo.id, 'open-again')
  })

  it('broadcast reaches the running agents whose message mode is open, only', async () => {
    const project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'broadcasting'}})).body.project.id
    const a = await create('bc-a', project)
    const b = await create('bc-b', project)
    const closed = await create('bc-closed', project)
    const stopped = await create('bc-stopped', project)
    await hub.request('PUT', `/api/v1/agents/${closed.id}/message-mode`, {body: {mode: 'closed'}})
    await hub.request('POST', `/api/v1/agents/${stopped.id}/stop`, {body: {}})
    const r = await hub.request('POST', `/api/v1/projects/${project}/broadcast`, {body: {message: 'echo to-everyone'}})
    expect(r.status).toBe(202)
    expect(r.body.messageId).toEqual(expect.any(String))
    expect(r.body.messageIds).toHaveLength(2)
    await inPane(a.id, 'to-everyone')
    await inPane(b.id, 'to-everyone')
    expect(await history(closed.id)).toEqual([])
    expect(await history(stopped.id)).toEqual([])
    expect((await history(a.id))[0]).toMatchObject({broadcastId: r.body.messageId, ingress: 'project_broadcast'})
    expect(pane(closed.id)).not.toMatch(/^to-everyone$/m)
    // A non-member cannot broadcast; an unknown project is 404.
    expect((await hub.request('POST', `/api/v1/projects/${project}/broadcast`, {token: outsider.token, body: {message: 'x'}})).status).toBe(404)
    expect((await hub.request('POST', '/api/v1/projects/no-such-project/broadcast', {body: {message: 'x'}})).status).toBe(404)
  })

  it('broker ingress (signed): topic agent.<id> and project.<id>, routed; unknown sender and invalid topic 422; unsigned 403', async () => {
    const sender = {kind: 'user', id: 'dev-user'}
    const one = await signed('/api/v1/broker/inbound', {topic: `agent.${demo.id}`, sender, message: 'echo via-topic'})
    expect(one.status).toBe(202)
    expect(one.body).toEqual({messageId: expect.any(String)})
    await inPane(demo.id, 'via-topic')
    expect((await history(demo.id)).find((m) => m.id === one.body.messageId)).toMatchObject({ingress: 'broker_inbound', sender})
    const all = await signed('/api/v1/broker/inbound', {topic: `project.${other}`, sender: {kind: 'agent', id: far.id}, message: 'echo via-project-topic'})
    expect(all.status).toBe(202)
    expect(all.body.messageIds).toHaveLength(1)
    await inPane(far.id, 'via-project-topic')
    const routed = await signed('/api/v1/broker/inbound/routed', {agentId: demo.id, sender, structured_message: {text: 'echo via-routed'}})
    expect(routed.status).toBe(202)
    await inPane(demo.id, 'via-routed')
    expect((await history(demo.id)).find((m) => m.id === routed.body.messageId)?.ingress).toBe('broker_inbound_routed')
    // Routed with a projectId: it must be the agent's project (ID or slug), else 404.
    expect((await signed('/api/v1/broker/inbound/routed', {agentId: demo.id, projectId: 'default', sender, message: 'echo routed-with-project'})).status).toBe(202)
    await inPane(demo.id, 'routed-with-project')
    const misrouted = await signed('/api/v1/broker/inbound/routed', {agentId: demo.id, projectId: other, sender, message: 'echo misrouted'})
    expect(misrouted.status).toBe(404)

    const before = await hub.store.messages.count()
    for (const s of [{kind: 'user', id: 'nobody'}, {kind: 'agent', id: far.id}, {kind: 'robot', id: 'dev-user'}, undefined]) {
      const r = await signed('/api/v1/broker/inbound', {topic: `agent.${demo.id}`, sender: s, message: 'x'})
      expect(r.status, JSON.stringify(s)).toBe(422)
      expect(r.body.error.code).toBe('unknown_sender')
    }
    for (const topic of ['agents.x', 'agent.', 'demo', 'agent.a b', 42, undefined]) {
      const r = await signed('/api/v1/broker/inbound', {topic, sender, message: 'x'})
      expect(r.status, String(topic)).toBe(422)
      expect(r.body.error.code).toBe('invalid_topic')
    }
    expect((await signed('/api/v1/broker/inbound', {topic: 'agent.no-such-agent', sender, message: 'x'})).status).toBe(404)
    expect(await hub.store.messages.count()).toBe(before)
    const unsigned = await hub.request('POST', '/api/v1/broker/inbound', {body: {topic: `agent.${demo.id}`, sender, message: 'x'}})
    expect(unsigned.status).toBe(403)

    // Another broker reaches only the agents it runs: none of these.
    const reg = await hub.request('POST', '/api/v1/brokers/register', {body: {name: 'stranger-broker'}})
    const joined = (await hub.request('POST', '/api/v1/brokers/join', {token: null, body: {joinToken: reg.body.joinToken}})).body
    const asStranger = (path: string, body: unknown) => {
      const payload = JSON.stringify(body)
      return hub.app.inject({method: 'POST', url: path, headers: {'content-type': 'application/json', ...signRequest(joined.brokerId, joined.secret, 'POST', path, payload)}, payload})
    }
    expect((await asStranger('/api/v1/broker/inbound', {topic: `agent.${demo.id}`, sender, message: 'echo stranger'})).statusCode).toBe(404)
    expect((await asStranger('/api/v1/broker/inbound/routed', {agentId: demo.id, sender, message: 'echo stranger'})).statusCode).toBe(404)
    const none = await asStranger('/api/v1/broker/inbound', {topic: `project.${other}`, sender: {kind: 'agent', id: far.id}, message: 'echo stranger'})
    expect(none.statusCode).toBe(202)
    expect(none.json().messageIds).toEqual([])
    expect(await hub.store.messages.count()).toBe(before)
  })

  it('a scheduled event fires once when due; a recurring schedule fires and advances; cancel stops it', async () => {
    const at = iso(new Date(clock.now().getTime() + 3_600_000))
    const once = await hub.request('POST', '/api/v1/projects/default/scheduled-events', {body: {agent: 'demo', at, message: 'echo scheduled-once'}})
    expect(once.status).toBe(201)
    expect(once.body.scheduledEvent).toMatchObject({kind: 'once', agentId: demo.id, nextAt: at, status: 'pending', payload: {text: 'echo scheduled-once'}})
    const rec = await hub.request('POST', '/api/v1/projects/default/schedules', {body: {agent: demo.id, every: '2h', message: 'echo scheduled-every'}})
    expect(rec.status).toBe(201)
    const firstAt = Date.parse(rec.body.schedule.nextAt)
    expect(rec.body.schedule).toMatchObject({kind: 'recurring', everyMs: 7_200_000, status: 'pending'})
    expect((await hub.request('GET', '/api/v1/projects/default/scheduled-events')).body.scheduledEvents.map((s: {id: string}) => s.id)).toEqual([once.body.scheduledEvent.id])
    expect((await hub.request('GET', '/api/v1/projects/default/schedules')).body.schedules.map((s: {id: string}) => s.id)).toEqual([rec.body.schedule.id])

    // Not yet due.
    expect(await hub.services.messages.runDue()).toBe(0)
    clock.advance(3_600_000 + 1000)
    await waitFor(async () => (await hub.store.messages.schedules(def)).find((s) => s.id === once.body.scheduledEvent.id)?.status === 'done', 10_000, 'the event ran')
    await inPane(demo.id, 'scheduled-once')
    expect((await history(demo.id)).find((m) => m.ingress === 'scheduled_event')).toMatchObject({body: {text: 'echo scheduled-once'}, delivery: 'delivered'})

    clock.advance(3_600_000)
    await waitFor(async () => Date.parse((await hub.store.messages.schedules(def)).find((s) => s.id === rec.body.schedule.id)!.nextAt) === firstAt + 7_200_000, 10_000, 'the schedule advanced')
    await inPane(demo.id, 'scheduled-every')
    const after = (await hub.store.messages.schedules(def)).find((s) => s.id === rec.body.schedule.id)!
    expect(after.status).toBe('pending')
    // Once done, the event does not fire again.
    expect((await history(demo.id)).filter((m) => m.ingress === 'scheduled_event')).toHaveLength(1)

    const c = await hub.request('DELETE', `/api/v1/projects/default/schedules/${rec.body.schedule.id}`)
    expect(c.status).toBe(200)
    expect(c.body).toEqual({cancelled: true})
    const count = (await history(demo.id)).filter((m) => m.ingress === 'schedule').length
    clock.advance(7_200_000 * 2)
    expect(await hub.services.messages.runDue()).toBe(0)
    expect((await history(demo.id)).filter((m) => m.ingress === 'schedule')).toHaveLength(count)
    expect((await hub.store.messages.schedules(def)).find((s) => s.id === rec.body.schedule.id)!.status).toBe('cancelled')
    expect((await hub.request('DELETE', `/api/v1/projects/default/schedules/no-such`)).status).toBe(404)
  })

  it('schedule validation: 400 for a bad time, a too-short interval, an unknown agent; non-members 404', async () => {
    const bad = [
      ['scheduled-events', {agent: 'demo', at: 'tomorrow-ish', message: 'x'}],
      ['scheduled-events', {agent: 'no-such', at: iso(new Date()), message: 'x'}],
      ['scheduled-events', {agent: far.id, at: iso(new Date()), message: 'x'}],
      ['schedules', {agent: 'demo', every: '30s', message: 'x'}],
      ['schedules', {agent: 'demo', every: 'often', message: 'x'}],
      ['schedules', {agent: 'demo', every: '1h', startAt: 'soon', message: 'x'}],
      ['schedules', {agent: 'demo', every: '1h'}],
    ] as const
    const before = await hub.store.messages.countSchedules()
    for (const [path, body] of bad) expect((await hub.request('POST', `/api/v1/projects/default/${path}`, {body})).status, JSON.stringify(body)).toBe(400)
    expect((await hub.request('POST', '/api/v1/projects/default/schedules', {token: outsider.token, body: {agent: 'demo', every: '1h', message: 'x'}})).status).toBe(404)
    expect(await hub.store.messages.countSchedules()).toBe(before)
  })
})
