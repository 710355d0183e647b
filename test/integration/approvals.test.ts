import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {openSse, type SseClient} from '../helpers/sse.js'
import {createUser, type TestUser} from '../helpers/users.js'

/** A webhook receiver on loopback that keeps every POST. */
async function receiver() {
  const got: Array<{event: string; body: any}> = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (raw += c))
    req.on('end', () => {
      got.push({event: String(req.headers['x-svc-event']), body: JSON.parse(raw)})
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {got, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => new Promise<void>((r) => server.close(() => r()))}
}

/**
 * Approvals on the Hub (CONTRACT "Approvals"): a hook's request held pending with the agent
 * waiting, who may decide (a table of principals), the refusals that change nothing, the
 * long-poll a hook waits on, the terminal's answer, rules, the event stream and the webhook.
 */
describeEachDialect('approvals', (dialect) => {
  let hub: FakeBrokerHub
  let alice: TestUser // owns the project and the agents
  let bob: TestUser // a member: holds agent.lifecycle
  let carol: TestUser // no member: sees nothing
  let bobReadOnly: string // bob's access token with agent.read only
  let projectId: string
  let worker: {id: string; name: string}
  let helper: {id: string; name: string} // worker's child
  let helperToken: string
  const streams: SseClient[] = []

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
    alice = await createUser(hub)
    bob = await createUser(hub)
    carol = await createUser(hub)
    projectId = (await hub.request('POST', '/api/v1/projects/register', {token: alice.token, body: {name: `appr-${dialect}`}})).body.project.id
    expect((await hub.request('POST', `/api/v1/projects/${projectId}/members`, {token: alice.token, body: {userId: bob.user.id, role: 'member'}})).status).toBe(200)
    const t = await hub.request('POST', '/api/v1/auth/tokens', {token: bob.token, body: {name: 'ro', projectId, permissions: ['project.read', 'agent.read', 'agent.list']}})
    expect(t.status).toBe(201)
    bobReadOnly = t.body.token
    worker = (await hub.request('POST', '/api/v1/agents', {token: alice.token, body: {projectId, name: 'worker', harnessConfig: 'shell'}})).body.agent
    const child = await hub.request('POST', '/api/v1/agents', {token: hub.tokenOf(worker.id), body: {projectId, name: 'helper', harnessConfig: 'shell'}})
    expect(child.status).toBe(201)
    helper = child.body.agent
    helperToken = hub.tokenOf(helper.id)
  })
  afterAll(async () => {
    for (const s of streams) s.close()
    await hub?.dispose()
  })

  const ask = (agentId: string, body: Record<string, unknown> = {tool: 'Bash', summary: 'rm -rf build', input: {command: 'rm -rf build'}}, token = hub.tokenOf(agentId)) =>
    hub.request('POST', `/api/v1/agents/${agentId}/approvals`, {token, body})
  const decide = (id: string, token: string, body: Record<string, unknown> = {decision: 'allow'}) => hub.request('POST', `/api/v1/approvals/${id}/decision`, {token, body})
  const stateOf = async (id: string) => (await hub.request('GET', `/api/v1/approvals/${id}`, {token: alice.token})).body.approval.state

  it('holds a hook request pending: the agent waits with "Permission: <tool>", the stream says approval_requested', async () => {
    const s = await openSse(`${hub.url}/api/v1/events?agentId=${helper.id}`, {token: alice.token})
    streams.push(s)
    const r = await ask(helper.id)
    expect(r.status).toBe(201)
    const a = r.body.approval
    expect(a).toMatchObject({agentId: helper.id, projectId, tool: 'Bash', summary: 'rm -rf build', input: {command: 'rm -rf build'}, state: 'pending', decidedBy: null, decidedAt: null, reason: null})
    for (const k of ['id', 'agentId', 'projectId', 'tool', 'summary', 'input', 'state', 'createdAt', 'decidedBy', 'decidedAt', 'reason']) expect(a).toHaveProperty(k)
    const agent = (await hub.request('GET', `/api/v1/agents/${helper.id}`, {token: alice.token})).body.agent
    expect(agent).toMatchObject({activity: 'waiting_for_input', detail: 'Permission: Bash: rm -rf build'})
    const ev = await s.next((e) => e.event === 'approval_requested', 'approval_requested event')
    expect(ev.data).toMatchObject({event: 'approval_requested', agent: {id: helper.id, name: 'helper'}, approval: {id: a.id, state: 'pending', summary: 'rm -rf build'}})
    expect(ev.data.at).toBeTruthy()
    expect(await stateOf(a.id)).toBe('pending')
    // Listed for the agent, and in the inbox of those who may decide it.
    expect((await hub.request('GET', `/api/v1/agents/${helper.id}/approvals?state=pending`, {token: alice.token})).body.approvals.map((x: any) => x.id)).toContain(a.id)
    for (const who of [alice.token, bob.token, hub.tokenOf(worker.id)]) expect((await hub.request('GET', '/api/v1/approvals?state=pending', {token: who})).body.approvals.map((x: any) => x.id)).toContain(a.id)
    for (const who of [carol.token, bobReadOnly, helperToken]) expect((await hub.request('GET', '/api/v1/approvals?state=pending', {token: who})).body.approvals).toEqual([])
    expect((await decide(a.id, alice.token)).status).toBe(200)
  })

  it('who may decide: owner, lifecycle holder, parent agent; never the agent itself, a read-only token or a stranger', async () => {
    const table: Array<[string, () => string, number]> = [
      ['the agent itself', () => helperToken, 403],
      ['a read-only token of a member', () => bobReadOnly, 403],
      ['a stranger (no member)', () => carol.token, 404],
      ['the owner', () => alice.token, 200],
      ['a lifecycle holder', () => bob.token, 200],
      ['the parent agent', () => hub.tokenOf(worker.id), 200],
    ]
    for (const [who, token, status] of table) {
      const a = (await ask(helper.id)).body.approval
      const r = await decide(a.id, token(), {decision: 'deny', reason: `by ${who}`})
      expect(r.status, who).toBe(status)
      if (status === 200) {
        expect(r.body.approval, who).toMatchObject({id: a.id, state: 'denied', reason: `by ${who}`})
        expect(r.body.approval.decidedBy.kind, who).toBe(who === 'the parent agent' ? 'agent' : 'user')
      } else {
        expect(await stateOf(a.id), who).toBe('pending')
        await decide(a.id, alice.token)
      }
    }
    // Decisions are audited like merges.
    const audit = await hub.store.audit.list('approval_decision', 50)
    expect(audit.some((r) => r.actor.id === worker.id && r.target === helper.id)).toBe(true)
  })

  it('an agent asks only for itself: no forged approvals for another agent, none made by a person', async () => {
    expect((await ask(helper.id, undefined, hub.tokenOf(worker.id))).status).toBe(403)
    expect((await ask(worker.id, undefined, helperToken)).status).toBe(403)
    expect((await ask(helper.id, undefined, alice.token)).status).toBe(403)
    expect((await hub.request('GET', `/api/v1/agents/${helper.id}/approvals?state=pending`, {token: alice.token})).body.approvals).toEqual([])
  })

  it('refusals change nothing: 400 neither allow nor deny, 404 unknown, 409 already_decided, 409 expired', async () => {
    const a = (await ask(helper.id)).body.approval
    for (const body of [{}, {decision: 'maybe'}, {decision: 'allow', extra: 1}]) {
      const r = await decide(a.id, alice.token, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.code).toBe('validation_error')
    }
    expect(await stateOf(a.id)).toBe('pending')
    const unknown = await decide('00000000-0000-0000-0000-000000000000', alice.token)
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found'])
    expect((await decide(a.id, alice.token, {decision: 'allow'})).status).toBe(200)
    const again = await decide(a.id, bob.token, {decision: 'deny', reason: 'too late'})
    expect([again.status, again.body.error.code]).toEqual([409, 'already_decided'])
    expect((await hub.request('GET', `/api/v1/approvals/${a.id}`, {token: alice.token})).body.approval).toMatchObject({state: 'allowed', reason: null, decidedBy: {kind: 'user', id: alice.user.id}})

    const short = (await ask(helper.id, {tool: 'Bash', summary: 'sleep 1', waitSeconds: 1})).body.approval
    await waitFor(async () => (await stateOf(short.id)) === 'expired', 10_000, 'expired')
    const late = await decide(short.id, alice.token)
    expect([late.status, late.body.error.code]).toEqual([409, 'approval_expired'])
    expect(await stateOf(short.id)).toBe('expired')
  })

  it('a waiting hook learns the decision at once (long-poll), with the reason of a deny', async () => {
    const a = (await ask(helper.id)).body.approval
    const polled = hub.request('GET', `/api/v1/approvals/${a.id}?wait=20`, {token: helperToken})
    await decide(a.id, bob.token, {decision: 'deny', reason: 'not on main'})
    const r = await polled
    expect(r.status).toBe(200)
    expect(r.body.approval).toMatchObject({state: 'denied', reason: 'not on main'})
    // Another agent of the project cannot read a sibling's approval by its ID... only its own or a child's.
    expect((await hub.request('GET', `/api/v1/approvals/${a.id}`, {token: carol.token})).status).toBe(404)
  })

  it('the terminal answered first: a report that the harness went on marks what is pending answered', async () => {
    const a = (await ask(helper.id)).body.approval
    expect((await hub.request('POST', `/api/v1/agents/${helper.id}/status`, {token: helperToken, body: {activity: 'thinking', detail: ''}})).status).toBe(200)
    const got = (await hub.request('GET', `/api/v1/approvals/${a.id}`, {token: alice.token})).body.approval
    expect(got).toMatchObject({state: 'answered', decidedBy: {kind: 'terminal'}})
    const r = await decide(a.id, alice.token)
    expect([r.status, r.body.error.code]).toEqual([409, 'already_decided'])
  })

  it('rules decide at once (deny wins over allow); a webhook hears approval_requested once', async () => {
    const rules = [
      {tool: 'Bash', match: 'npm test*', decision: 'allow'},
      {tool: '*', match: '*--force*', decision: 'deny'},
      {harness: 'codex', tool: 'Bash', decision: 'allow'},
    ]
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {approvals: {rules}}})).status).toBe(200)
    const allowed = (await ask(helper.id, {tool: 'Bash', summary: 'npm test -- --watch=false'})).body.approval
    expect(allowed).toMatchObject({state: 'allowed', decidedBy: {kind: 'rule', index: 0}})
    const denied = (await ask(helper.id, {tool: 'Bash', summary: 'npm test --force'})).body.approval
    expect(denied).toMatchObject({state: 'denied', decidedBy: {kind: 'rule', index: 1}})
    // A second command on a new line is judged as sent (not as the one-lined display text):
    // `npm test*` does not allow it, a person must.
    const chained = (await ask(helper.id, {tool: 'Bash', summary: 'npm test\nrm -rf /'})).body.approval
    expect(chained.state).toBe('pending')
    await decide(chained.id, alice.token)
    // A rule of another harness does not match this (shell) agent.
    const asked = (await ask(helper.id, {tool: 'Bash', summary: 'ls'})).body.approval
    expect(asked.state).toBe('pending')
    await decide(asked.id, alice.token)
    const bad = await hub.request('PUT', '/api/v1/admin/server-config', {body: {approvals: {rules: [{tool: 'Bash', decision: 'perhaps'}]}}})
    expect(bad.status).toBe(400)

    const rx = await receiver()
    try {
      const seq = await hub.store.agentEvents.latestSeq()
      await waitFor(() => hub.services.agentFeed.position() >= seq, 10_000, 'the feed past earlier events')
      expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {notification_channels: [{type: 'webhook', url: rx.url, events: ['approval_requested'], allow_private: true}]}}})).status).toBe(200)
      const a = (await ask(helper.id, {tool: 'Bash', summary: 'make deploy'})).body.approval
      await waitFor(() => rx.got.length >= 1, 15_000, 'webhook delivery')
      expect(rx.got[0].event).toBe('approval_requested')
      expect(rx.got[0].body).toMatchObject({event: 'approval_requested', agent: {id: helper.id, name: 'helper', projectId}, approval: {id: a.id, summary: 'make deploy', state: 'pending'}})
      expect(rx.got[0].body.text).toContain('make deploy')
      // A rule's decision asks nobody: no event. Give the feed a moment past it, then count.
      await ask(helper.id, {tool: 'Bash', summary: 'npm test'})
      const last = await hub.store.agentEvents.latestSeq()
      await waitFor(() => hub.services.agentFeed.position() >= last, 10_000, 'the feed past the rule')
      await decide(a.id, alice.token)
      expect(rx.got.filter((g) => g.event === 'approval_requested' && g.body.approval.id === a.id)).toHaveLength(1)
      expect(rx.got).toHaveLength(1)
    } finally {
      await hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {notification_channels: []}, approvals: {rules: []}}})
      await rx.close()
    }
  })
})
