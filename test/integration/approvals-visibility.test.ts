import {afterAll, beforeAll, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {openSse, type SseClient} from '../helpers/sse.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Who sees an approval (review finding D): its `input` is the tool's command and arguments and
 * may hold secrets, so an approval is visible only to callers allowed to read its agent that are
 * a person, the agent's parent agent or the agent itself. Another agent of the same project (a
 * sibling under the same lead, an unrelated agent) reads the agent itself but never its
 * approvals: not by ID, not in the agent's list, not in `GET /api/v1/approvals`, not in the event
 * stream (live or replayed). Nor in the agent's `detail`: `Permission: Bash: <command>` while it
 * waits and `Bash: <command>` while it runs reach another agent as `Permission: Bash` and `Bash`
 * (GET, the list, the team tree, the event stream), whole to those who see the approvals. Real
 * HTTP on loopback, both databases.
 */
describeEachDialect('approval visibility', (dialect) => {
  let hub: FakeBrokerHub
  let alice: TestUser // owns the project and the agents
  let carol: TestUser // no member
  let aliceReadOnly: string // alice's access token with agent.read only: reads, never decides
  let projectId: string
  let lead: {id: string}
  let worker: {id: string} // lead's child: asks
  let sibling: {id: string} // lead's other child
  let loner: {id: string} // alice's, in no team
  const streams: SseClient[] = []
  const SECRET = 'ghp_visibility0123456789abcdefSECRET'

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
    alice = await createUser(hub)
    carol = await createUser(hub)
    projectId = (await hub.request('POST', '/api/v1/projects/register', {token: alice.token, body: {name: `vis-${dialect}`}})).body.project.id
    const t = await hub.request('POST', '/api/v1/auth/tokens', {token: alice.token, body: {name: 'ro', projectId, permissions: ['project.read', 'agent.read', 'agent.list']}})
    expect(t.status).toBe(201)
    aliceReadOnly = t.body.token
    const create = async (name: string, token: string) => {
      const r = await hub.request('POST', '/api/v1/agents', {token, body: {projectId, name, harnessConfig: 'shell'}})
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      return r.body.agent
    }
    lead = await create('lead', alice.token)
    loner = await create('loner', alice.token)
    worker = await create('worker', hub.tokenOf(lead.id))
    sibling = await create('sibling', hub.tokenOf(lead.id))
  })
  afterAll(async () => {
    for (const s of streams) s.close()
    await hub?.dispose()
  })

  const ask = (agentId: string, command: string) => hub.request('POST', `/api/v1/agents/${agentId}/approvals`, {token: hub.tokenOf(agentId), body: {tool: 'Bash', summary: command, input: {command}}})
  const get = (path: string, token: string) => hub.request('GET', path, {token})
  const stream = async (token: string, query = '', headers?: Record<string, string>) => {
    const s = await openSse(`${hub.url}/api/v1/events${query}`, {token, headers})
    expect(s.status).toBe(200)
    streams.push(s)
    return s
  }

  it("another agent never sees an agent's approval or its input; the agent, its lead and persons who read it do", async () => {
    const seq = await hub.store.agentEvents.latestSeq()
    const live = {sibling: await stream(hub.tokenOf(sibling.id)), loner: await stream(hub.tokenOf(loner.id)), lead: await stream(hub.tokenOf(lead.id)), alice: await stream(alice.token)}
    const asked = await ask(worker.id, `deploy --token ${SECRET}`)
    expect(asked.status).toBe(201)
    const a = asked.body.approval
    expect(a.input).toEqual({command: `deploy --token ${SECRET}`})

    // Those who may: the agent itself, its lead, the owner, a read-only token of the owner.
    const readers: Array<[string, string]> = [['the agent', hub.tokenOf(worker.id)], ['its lead', hub.tokenOf(lead.id)], ['the owner', alice.token], ['a read-only token', aliceReadOnly]]
    for (const [who, token] of readers) {
      const one = await get(`/api/v1/approvals/${a.id}`, token)
      expect(one.status, who).toBe(200)
      expect(one.body.approval, who).toMatchObject({id: a.id, input: {command: `deploy --token ${SECRET}`}})
      const ofAgent = await get(`/api/v1/agents/${worker.id}/approvals`, token)
      expect(ofAgent.body.approvals.map((x: any) => [x.id, x.input?.command]), who).toEqual([[a.id, `deploy --token ${SECRET}`]])
    }
    // Its lead's inbox lists it (the lead may decide it).
    expect((await get('/api/v1/approvals?state=pending', hub.tokenOf(lead.id))).body.approvals.map((x: any) => x.id)).toEqual([a.id])

    // Those who may not: a sibling and an unrelated agent read the worker, not its approvals.
    for (const [who, token] of [['a sibling', hub.tokenOf(sibling.id)], ['an unrelated agent', hub.tokenOf(loner.id)]]) {
      expect((await get(`/api/v1/agents/${worker.id}`, token)).status, who).toBe(200)
      const one = await get(`/api/v1/approvals/${a.id}`, token)
      expect([one.status, one.body.error?.code], who).toEqual([404, 'not_found'])
      const ofAgent = await get(`/api/v1/agents/${worker.id}/approvals`, token)
      expect([ofAgent.status, ofAgent.body.approvals], who).toEqual([200, []])
      const inbox = await get('/api/v1/approvals', token)
      expect([inbox.status, inbox.body.approvals], who).toEqual([200, []])
      // The long-poll a hook waits on is no way around it.
      expect((await get(`/api/v1/approvals/${a.id}?wait=1`, token)).status, who).toBe(404)
    }
    // A stranger sees nothing at all.
    expect((await get(`/api/v1/approvals/${a.id}`, carol.token)).status).toBe(404)

    // The event stream: the lead and the owner hear approval_requested with the input...
    for (const [who, s] of [['lead', live.lead], ['alice', live.alice]] as const) {
      const ev = await s.next((e) => e.event === 'approval_requested' && e.data.approval.id === a.id, `approval_requested on ${who}'s stream`)
      expect(ev.data.approval.input, who).toEqual({command: `deploy --token ${SECRET}`})
    }
    // ...a sibling and an unrelated agent do not. Each then asks one of its own, which its own
    // stream carries: the stream delivers in order, so by then the worker's was passed over.
    for (const [who, s, own] of [['sibling', live.sibling, sibling], ['loner', live.loner, loner]] as const) {
      const mine = (await ask(own.id, `echo ${who}`)).body.approval
      await s.next((e) => e.event === 'approval_requested' && e.data.approval.id === mine.id, `${who}'s own approval_requested`)
      expect(s.events.filter((e) => e.event === 'approval_requested').map((e) => e.data.approval.agentId), who).toEqual([own.id])
      expect(JSON.stringify(s.events), who).not.toContain(a.id)
    }

    // Replayed from before the request (Last-Event-ID): the same.
    for (const [who, own] of [['sibling', sibling], ['loner', loner]] as const) {
      const s = await stream(hub.tokenOf(own.id), '', {'last-event-id': String(seq)})
      await s.next((e) => e.event === 'approval_requested' && e.data.approval.agentId === own.id, `${who}'s own approval_requested, replayed`)
      expect(s.events.filter((e) => e.event === 'approval_requested').map((e) => e.data.approval.agentId), who).toEqual([own.id])
      expect(JSON.stringify(s.events), who).not.toContain(a.id)
    }
  })

  it("another agent reads a waiting or running agent's detail without its command; the agent, its lead and persons read it whole", async () => {
    const seq = await hub.store.agentEvents.latestSeq()
    const live = {sibling: await stream(hub.tokenOf(sibling.id)), loner: await stream(hub.tokenOf(loner.id)), lead: await stream(hub.tokenOf(lead.id)), alice: await stream(alice.token)}
    const waitingCommand = `release --key ${SECRET}`
    expect((await ask(worker.id, waitingCommand)).status).toBe(201)
    const whole = {waiting: `Permission: Bash: ${waitingCommand}`, running: `Bash: curl -H 'authorization: ${SECRET}' https://x`}
    const cut = {waiting: 'Permission: Bash', running: 'Bash'}
    const detailOf = async (token: string) => {
      const one = (await get(`/api/v1/agents/${worker.id}`, token)).body.agent.detail
      const listed = (await get(`/api/v1/agents?projectId=${projectId}`, token)).body.agents.find((x: any) => x.id === worker.id).detail
      const tree = await get(`/api/v1/agents/${lead.id}/tree`, token)
      expect(tree.status).toBe(200)
      const inTree = tree.body.tree.children.find((c: any) => c.agent.id === worker.id).agent.detail
      return {one, listed, inTree, leaks: JSON.stringify(tree.body).includes(SECRET)}
    }
    const others: Array<[string, string, (typeof live)['sibling']]> = [['a sibling', hub.tokenOf(sibling.id), live.sibling], ['an unrelated agent', hub.tokenOf(loner.id), live.loner]]
    const seers: Array<[string, string]> = [['the agent', hub.tokenOf(worker.id)], ['its lead', hub.tokenOf(lead.id)], ['the owner', alice.token], ['a read-only token', aliceReadOnly]]
    for (const phase of ['waiting', 'running'] as const) {
      if (phase === 'running') {
        const r = await hub.request('POST', `/api/v1/agents/${worker.id}/status`, {token: hub.tokenOf(worker.id), body: {activity: 'executing', detail: whole.running}})
        expect(r.status).toBe(200)
      }
      for (const [who, token] of seers) expect(await detailOf(token), `${who}, ${phase}`).toEqual({one: whole[phase], listed: whole[phase], inTree: whole[phase], leaks: true})
      for (const [who, token] of others) expect(await detailOf(token), `${who}, ${phase}`).toEqual({one: cut[phase], listed: cut[phase], inTree: cut[phase], leaks: false})
      // The event stream: the lead and the owner hear the whole detail, the others its label.
      for (const [who, s] of [['lead', live.lead], ['alice', live.alice]] as const) await s.next((e) => e.event === 'agent' && e.data.id === worker.id && e.data.detail === whole[phase], `${who} hears the ${phase} detail whole`)
      for (const [who, , s] of others) await s.next((e) => e.event === 'agent' && e.data.id === worker.id && e.data.detail === cut[phase], `${who} hears the ${phase} detail cut`)
    }
    for (const [who, , s] of others) expect(JSON.stringify(s.events), who).not.toContain(SECRET)
    // Replayed from before the request: the same.
    for (const [who, token] of others) {
      const s = await stream(token, '', {'last-event-id': String(seq)})
      await s.next((e) => e.event === 'agent' && e.data.id === worker.id && e.data.detail === cut.running, `${who}'s replay reaches the running detail`)
      expect(s.events.filter((e) => e.data.id === worker.id).map((e) => e.data.detail), who).toContain(cut.waiting)
      expect(JSON.stringify(s.events), who).not.toContain(SECRET)
    }
  })
})
