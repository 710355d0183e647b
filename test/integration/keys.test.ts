import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {describeEachDialect} from '../helpers/hub.js'
import {FakeBroker, startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * The keys operation (spec: Authentication 7, Errors / Keys, Events 4): `{keys}` typed once into a
 * running agent's terminal, authorized like attach, with the outcome codes in the spec's order.
 * Real Hub, real co-located broker on its own tmux server; hand-driven tunnels for the outcomes a
 * healthy broker cannot produce (disconnected, older, failing, silent).
 */
describeEachDialect('keys', (dialect) => {
  let hub: LiveHub
  let owner: TestUser // member of the default project, creator of `mine`
  let member: TestUser // member of the default project, not the creator, no agent.attach
  let outsider: TestUser // in no project
  let admin: TestUser // system admin, in no project
  let other: string // another project
  let mine: {id: string; name: string; projectId: string}
  let peer: {id: string; name: string} // an agent of the default project (the agent caller)
  let far: {id: string; name: string} // an agent of the other project
  const open: FakeBroker[] = []

  const keys = (url: string, token: string | null, body: unknown = {keys: 'x'}) => hub.request('POST', url, {token, body})
  const pane = (id: string) => hub.tmux('capture-pane', '-p', '-t', `=svc-${id}:`).stdout
  const auditCount = async () => (await hub.store.audit.list('agent_keys')).length

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    owner = await createUser(hub)
    member = await createUser(hub)
    outsider = await createUser(hub)
    admin = await createUser(hub, {systemAdmin: true})
    const t = iso(new Date())
    const def = (await hub.request('GET', '/api/v1/projects/default')).body.project.id
    await hub.store.projects.setMember(def, owner.user.id, 'member', t)
    await hub.store.projects.setMember(def, member.user.id, 'member', t)
    other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'other'}, token: owner.token})).body.project.id
    const made = await hub.request('POST', '/api/v1/agents', {token: owner.token, body: {name: 'mine', projectId: def, harnessConfig: 'shell'}})
    expect(made.status).toBe(201)
    mine = made.body.agent
    expect(mine.projectId).toBe(def)
    peer = (await hub.request('POST', '/api/v1/agents', {body: {name: 'peer', projectId: def, harnessConfig: 'shell'}})).body.agent
    far = (await hub.request('POST', '/api/v1/agents', {body: {name: 'far', projectId: other, harnessConfig: 'shell'}})).body.agent
  })
  afterAll(async () => {
    for (const b of open) await b.close()
    await hub?.dispose()
  })

  const top = (id: string) => `/api/v1/agents/${id}/keys`
  const scoped = (project: string, ref: string) => `/api/v1/projects/${project}/agents/${ref}/keys`

  it('the owner types literal keys into the pane: 200 {operationId, delivered: true}', async () => {
    const r = await keys(top(mine.id), owner.token, {keys: 'echo typed-by-keys\r'})
    expect(r.status).toBe(200)
    expect(r.body).toEqual({operationId: expect.stringMatching(/^op_/), delivered: true})
    await waitFor(() => /^typed-by-keys$/m.test(pane(mine.id)), 10_000, 'the keys ran in the pane')
    // Project-scoped form, by slug.
    const s = await keys(scoped('default', 'mine'), owner.token, {keys: 'echo scoped-keys\r'})
    expect(s.status).toBe(200)
    await waitFor(() => /^scoped-keys$/m.test(pane(mine.id)), 10_000, 'the scoped keys ran')
  })

  it("the owner's user access token sends keys only when it carries agent.lifecycle; attach follows the same rule", async () => {
    const token = async (permissions: string[]) =>
      (await hub.request('POST', '/api/v1/auth/tokens', {token: owner.token, body: {name: `t-${permissions.join('-')}`, projectId: mine.projectId, permissions}})).body.token as string
    const readOnly = await token(['project.read', 'agent.read'])
    const denied = await keys(top(mine.id), readOnly)
    expect(denied.status).toBe(403)
    expect(denied.body.error.code).toBe('keys_denied')
    expect((await keys(top(mine.id), await token(['project.read', 'agent.read', 'agent.lifecycle']))).status).toBe(200)
    // Attach: the owner (a plain member, without agent.attach) may; another member may not.
    const attach = (t: string) => hub.request('GET', `/api/v1/agents/${mine.id}/attach`, {token: t})
    expect((await attach(owner.token)).status).toBe(426)
    expect((await attach(member.token)).status).toBe(403)
    expect((await attach(readOnly)).status).toBe(403)
  })

  it('humans: owner and system admin allowed; a member without agent.attach 403 keys_denied; a non-member 404; both routes', async () => {
    for (const url of [top(mine.id), scoped(mine.projectId, mine.id), scoped('default', 'mine')]) {
      expect((await keys(url, owner.token)).status, `owner ${url}`).toBe(200)
      expect((await keys(url, admin.token)).status, `admin ${url}`).toBe(200)
      expect((await keys(url, hub.devToken)).status, `dev admin ${url}`).toBe(200)
      const m = await keys(url, member.token)
      expect(m.status, `member ${url}`).toBe(403)
      expect(m.body.error.code).toBe('keys_denied')
      const o = await keys(url, outsider.token)
      expect(o.status, `outsider ${url}`).toBe(404)
      expect(o.body.error.code).toBe('not_found')
    }
    // The member may message the agent (message authority) and still not send keys.
    expect((await hub.request('POST', `/api/v1/agents/${mine.id}/message`, {token: member.token, body: {message: 'echo from-member'}})).status).toBe(202)
    expect((await keys(top(mine.id), member.token)).body.error.code).toBe('keys_denied')
    // Unknown targets: 404 on both routes.
    expect((await keys(top('no-such-agent'), owner.token)).status).toBe(404)
    expect((await keys(scoped('default', 'no-such-agent'), owner.token)).status).toBe(404)
    expect((await keys(scoped('no-such-project', 'mine'), owner.token)).status).toBe(404)
    expect((await keys(scoped(other, 'mine'), owner.token)).status).toBe(404)
    // Unauthenticated: 401.
    expect((await keys(top(mine.id), null)).status).toBe(401)
  })

  it('a user access token of the owner, bounded to another project, may not send keys to the agent', async () => {
    const t = await hub.request('POST', '/api/v1/auth/tokens', {token: owner.token, body: {name: 'bounded', projectId: other, permissions: ['project.read', 'agent.list', 'agent.read', 'agent.message']}})
    expect(t.status).toBe(201)
    for (const url of [top(mine.id), scoped(mine.projectId, mine.id)]) {
      const r = await keys(url, t.body.token)
      // Outside its boundary the token cannot even see the agent.
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(404)
      expect(r.body.error.code).toBe('not_found')
    }
  })

  it('agents: ScopeAgentLifecycle, the same project and live attach authority (itself, its descendants) allowed, on both routes', async () => {
    const {token} = await hub.services.agentTokens.mint({id: peer.id, role: 'full'})
    // Its own terminal.
    expect((await keys(top(peer.id), token)).status).toBe(200)
    expect((await keys(scoped('default', 'peer'), token)).status).toBe(200)
    // Its child (created with its credential) and grandchild.
    const child = await hub.request('POST', '/api/v1/agents', {token, body: {name: 'peer-child', projectId: mine.projectId, harnessConfig: 'shell', role: 'full'}})
    expect(child.status, JSON.stringify(child.body)).toBe(201)
    const {token: childToken} = await hub.services.agentTokens.mint({id: child.body.agent.id, role: 'full'})
    const grandchild = await hub.request('POST', '/api/v1/agents', {token: childToken, body: {name: 'peer-grandchild', projectId: mine.projectId, harnessConfig: 'shell'}})
    expect(grandchild.status, JSON.stringify(grandchild.body)).toBe(201)
    for (const url of [top(child.body.agent.id), scoped(mine.projectId, 'peer-child'), top(grandchild.body.agent.id), scoped('default', 'peer-grandchild')]) {
      expect((await keys(url, token)).status, url).toBe(200)
    }
    // Another agent of its project (made by a person), and its own parent: 404, as if it did not exist.
    for (const [url, t] of [[top(mine.id), token], [scoped(mine.projectId, mine.id), token], [scoped('default', 'mine'), token], [top(peer.id), childToken], [scoped('default', 'peer'), childToken]] as const) {
      const r = await keys(url, t)
      expect(r.status, url).toBe(404)
      expect(r.body.error.code).toBe('not_found')
    }
    // Same project, unknown target: 404 on both routes.
    expect((await keys(top('no-such-agent'), token)).status).toBe(404)
    expect((await keys(scoped('default', 'no-such-agent'), token)).status).toBe(404)
  })

  it('agents without ScopeAgentLifecycle: 403 keys_denied, on the top-level route before the project comparison', async () => {
    for (const role of ['baseline', 'readonly', 'none']) {
      const {token} = await hub.services.agentTokens.mint({id: peer.id, role})
      for (const url of [top(mine.id), scoped(mine.projectId, mine.id), top(far.id), top('no-such-agent')]) {
        const r = await keys(url, token)
        expect(r.status, `${role} ${url}`).toBe(403)
        expect(r.body.error.code).toBe('keys_denied')
      }
    }
    // Message authority alone (baseline holds agent:notify) is not enough.
    const {token: baseline} = await hub.services.agentTokens.mint({id: peer.id, role: 'baseline'})
    expect((await hub.request('POST', `/api/v1/agents/${mine.id}/message`, {token: baseline, body: {message: 'echo notify-ok'}})).status).toBe(202)
    expect((await keys(top(mine.id), baseline)).body.error.code).toBe('keys_denied')
  })

  it('agents across projects: the project-scoped route is 422 on the project alone (before scope and target); the top-level route 422 for an existing foreign agent, 404 for none', async () => {
    const {token: full} = await hub.services.agentTokens.mint({id: peer.id, role: 'full'})
    const {token: baseline} = await hub.services.agentTokens.mint({id: peer.id, role: 'baseline'})
    for (const token of [full, baseline]) {
      for (const url of [scoped(other, far.id), scoped(other, 'far'), scoped(other, 'no-such-agent'), scoped('no-such-project', 'x')]) {
        const r = await keys(url, token)
        expect(r.status, url).toBe(422)
        expect(r.body.error.code).toBe('cross_project_keys_unsupported')
      }
    }
    const foreign = await keys(top(far.id), full)
    expect(foreign.status).toBe(422)
    expect(foreign.body.error.code).toBe('cross_project_keys_unsupported')
    const none = await keys(top('no-such-agent'), full)
    expect(none.status).toBe(404)
    // The far agent's own full token against this project's agent: 422 on both routes.
    const {token: farToken} = await hub.services.agentTokens.mint({id: far.id, role: 'full'})
    expect((await keys(top(mine.id), farToken)).body.error.code).toBe('cross_project_keys_unsupported')
    expect((await keys(scoped(mine.projectId, mine.id), farToken)).body.error.code).toBe('cross_project_keys_unsupported')
    // A human with cross-project authority (system admin) is not blocked by these rules.
    expect((await keys(top(far.id), admin.token)).status).toBe(200)
    expect((await keys(scoped(other, 'far'), admin.token)).status).toBe(200)
  })

  it('body rules: 400 for a missing, empty, non-string, too long or extra field; nothing sent', async () => {
    const before = await auditCount()
    for (const body of [{}, {keys: ''}, {keys: 5}, {keys: null}, {keys: ['a']}, {keys: 'x', extra: 1}, {keys: 'x'.repeat(8193)}, {key: 'x'}]) {
      const r = await keys(top(mine.id), owner.token, body)
      expect(r.status, JSON.stringify(body).slice(0, 40)).toBe(400)
      expect(r.body.error.code).toBe('validation_error')
    }
    const notJson = await hub.app.inject({method: 'POST', url: top(mine.id), headers: {authorization: `Bearer ${owner.token}`, 'content-type': 'application/json'}, payload: '{"keys": '})
    expect(notJson.statusCode).toBe(400)
    // The longest accepted (typed into another agent's prompt, then cleared).
    expect((await keys(top(peer.id), hub.devToken, {keys: 'x'.repeat(8192)})).status).toBe(200)
    hub.tmux('send-keys', '-t', `=svc-${peer.id}:`, 'C-c')
    expect(await auditCount()).toBe(before + 1)
  })

  it('a closed message mode does not block keys', async () => {
    expect((await hub.request('PUT', `/api/v1/agents/${mine.id}/message-mode`, {body: {mode: 'closed'}})).status).toBe(200)
    const m = await hub.request('POST', `/api/v1/agents/${mine.id}/message`, {body: {message: 'echo blocked'}})
    expect(m.status).toBe(409)
    expect(m.body.error.code).toBe('message_mode_closed')
    // Earlier tests left stray keys (x...) on the prompt line: clear it first.
    hub.tmux('send-keys', '-t', `=svc-${mine.id}:`, 'C-c')
    // Typing before bash has drawn its fresh prompt can lose the first key to its SIGINT handling.
    await waitFor(() => pane(mine.id).trimEnd().split('\n').at(-1)!.trim() === '$', 10_000, 'a fresh prompt after C-c')
    const k = await keys(top(mine.id), owner.token, {keys: 'echo keys-while-closed\r'})
    expect(k.status).toBe(200)
    await waitFor(() => /^keys-while-closed$/m.test(pane(mine.id)), 10_000, 'keys while closed').catch((e) => {
      throw new Error(e.message + '\n' + pane(mine.id))
    })
    await hub.request('PUT', `/api/v1/agents/${mine.id}/message-mode`, {body: {mode: 'open'}})
  })

  it('keys leave one content-free audit record each, and no message row', async () => {
    const messages = await hub.store.messages.count()
    const before = await auditCount()
    const r = await keys(top(mine.id), owner.token, {keys: 'echo audit-secret-9c1\r'})
    expect(r.status).toBe(200)
    const records = await hub.store.audit.list('agent_keys')
    expect(records.length).toBe(before + 1)
    const rec = records.find((a) => (a.details as {operationId?: string}).operationId === r.body.operationId)
    expect(rec).toMatchObject({kind: 'agent_keys', actor: {kind: 'user', id: owner.user.id}, projectId: mine.projectId, target: mine.id})
    expect(JSON.stringify(records)).not.toContain('audit-secret-9c1')
    expect(await hub.store.messages.count()).toBe(messages)
    // A refused request leaves no audit record.
    await keys(top(mine.id), member.token)
    expect(await auditCount()).toBe(before + 1)
  })

  it('a stopped agent: 409 agent_not_running (keys never start it)', async () => {
    const stopped = (await hub.request('POST', '/api/v1/agents', {body: {name: 'sleeper', projectId: 'default', harnessConfig: 'shell'}})).body.agent
    expect((await hub.request('POST', `/api/v1/agents/${stopped.id}/stop`, {body: {}})).body.agent.phase).toBe('stopped')
    for (const url of [top(stopped.id), scoped('default', 'sleeper')]) {
      const r = await keys(url, hub.devToken)
      expect(r.status).toBe(409)
      expect(r.body.error.code).toBe('agent_not_running')
    }
    expect((await hub.request('GET', `/api/v1/agents/${stopped.id}`)).body.agent.phase).toBe('stopped')
    expect(hub.tmux('has-session', '-t', `=svc-${stopped.id}`).code).not.toBe(0)
  })

  async function joined(name: string, capabilities: string[]): Promise<{b: FakeBroker; agentId: string}> {
    const r = await hub.request('POST', '/api/v1/brokers/register', {body: {name}})
    const j = await hub.request('POST', '/api/v1/brokers/join', {body: {joinToken: r.body.joinToken}, token: null})
    const b = new FakeBroker(hub.url, j.body.brokerId, j.body.secret)
    open.push(b)
    await b.connect({capabilities})
    await waitFor(() => hub.tunnels.isConnected(b.brokerId), 5000, 'connected')
    const a = await hub.request('POST', '/api/v1/agents', {body: {name: `on-${name}`, projectId: 'default', harnessConfig: 'shell', brokerId: b.brokerId}})
    expect(a.status).toBe(201)
    expect(a.body.agent.phase).toBe('running')
    return {b, agentId: a.body.agent.id}
  }

  it('a broker without the keys capability (older broker): 422 keys_unsupported, nothing sent', async () => {
    const {b, agentId} = await joined('older', ['agents', 'logs', 'attach', 'messages'])
    const r = await keys(top(agentId), hub.devToken)
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('keys_unsupported')
    expect(b.requests('agent.keys')).toEqual([])
  })

  it('a broker that answers unsupported_method, terminal_not_ready, agent_not_found or fails', async () => {
    const {b, agentId} = await joined('answers', ['agents', 'logs', 'attach', 'messages', 'keys'])
    let code = 'unsupported_method'
    b.answer = () => new Promise(() => {}) // answered by hand below
    b.ws.on('message', (raw) => {
      const msg = JSON.parse(raw.toString())
      if (msg.t === 'req' && msg.method === 'agent.keys') b.send({t: 'res', id: msg.id, ok: false, error: {code, message: code}})
    })
    const outcome = async (c: string) => {
      code = c
      const r = await keys(top(agentId), hub.devToken)
      return [r.status, r.body.error.code]
    }
    expect(await outcome('unsupported_method')).toEqual([422, 'keys_unsupported'])
    expect(await outcome('terminal_not_ready')).toEqual([409, 'terminal_not_ready'])
    expect(await outcome('agent_not_found')).toEqual([409, 'agent_not_running'])
    expect(await outcome('broker_error')).toEqual([502, 'keys_outcome_unknown'])
    // Delivered once each: no retry.
    expect(b.requests('agent.keys')).toHaveLength(4)
    expect(b.requests('agent.keys')[0].params).toEqual({agentId, input: {literal: 'x'}})
  })

  it('a broker that never answers: 504 keys_outcome_unknown after 10 s, sent once', async () => {
    const {b, agentId} = await joined('silent', ['agents', 'logs', 'attach', 'messages', 'keys'])
    b.answer = () => new Promise(() => {})
    const before = await auditCount()
    const started = Date.now()
    const r = await keys(top(agentId), hub.devToken)
    expect(r.status).toBe(504)
    expect(r.body.error.code).toBe('keys_outcome_unknown')
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500)
    expect(b.requests('agent.keys')).toHaveLength(1)
    expect(await auditCount()).toBe(before)
  }, 30_000)

  it('a broker that drops after the send: 502 keys_outcome_unknown; once disconnected: 503 keys_unavailable, nothing sent', async () => {
    const {b, agentId} = await joined('dropping', ['agents', 'logs', 'attach', 'messages', 'keys'])
    b.answer = (method) => {
      if (method === 'agent.keys') setTimeout(() => b.ws.terminate(), 20)
      return new Promise(() => {})
    }
    const r = await keys(top(agentId), hub.devToken)
    expect(r.status).toBe(502)
    expect(r.body.error.code).toBe('keys_outcome_unknown')
    await waitFor(() => !hub.tunnels.isConnected(b.brokerId), 5000, 'disconnected')
    const sent = b.requests('agent.keys').length
    const u = await keys(top(agentId), hub.devToken)
    expect(u.status).toBe(503)
    expect(u.body.error.code).toBe('keys_unavailable')
    expect(b.requests('agent.keys').length).toBe(sent)
  })
})
