import {afterAll, beforeAll, expect, it} from 'vitest'
import {HEARTBEAT_TIMEOUT_MS} from '../../src/domain/agents/agent-state.js'
import {AGENT_TOKEN_CACHE_TTL_MS, AGENT_TOKEN_TTL_MS, REFRESH_WINDOW_MS} from '../../src/domain/agents/agent-tokens.js'
import {iso} from '../../src/domain/shared/clock.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {movableClock} from '../helpers/sign-in-hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * The agent routes against a Hub whose broker is hand-driven (the tmux side is covered by
 * agents-live): dispatch rules, listing and visibility, both route forms, lifecycle, status
 * reports, the layered state with `offline`, and agent tokens. The Hub's clock is movable.
 */
describeEachDialect('agents: the API', (dialect) => {
  let hub: FakeBrokerHub
  const clock = movableClock()
  let projectId: string
  let otherProjectId: string
  let member: TestUser
  let stranger: TestUser

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect, {clock})
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'alpha'}})).body.project.id
    otherProjectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'beta'}})).body.project.id
    member = await createUser(hub)
    stranger = await createUser(hub)
    await hub.store.projects.setMember(projectId, member.user.id, 'member', iso(new Date()))
  })
  afterAll(() => hub?.dispose())

  const create = (body: Record<string, unknown>, token?: string) => hub.request('POST', '/api/v1/agents', {body: {projectId, ...body}, ...(token !== undefined && {token})})
  const get = (ref: string, token?: string) => hub.request('GET', `/api/v1/agents/${ref}`, {...(token !== undefined && {token})})
  const names = (r: {body: {agents: Array<{name: string}>}}) => r.body.agents.map((a) => a.name).sort()

  it('create answers 201 {agent} in phase running with the layered state and the creator', async () => {
    const r = await create({name: 'first', harnessConfig: 'shell', task: 'look around'})
    expect(r.status).toBe(201)
    expect(r.body.agent).toMatchObject({
      name: 'first',
      slug: 'first',
      projectId,
      brokerId: hub.fake.brokerId,
      phase: 'running',
      activity: 'idle',
      detail: '',
      harnessConfig: 'shell',
      task: 'look around',
      role: 'full',
      runtime: 'local',
      error: null,
      createdBy: {kind: 'user', id: 'dev-user'},
    })
    expect(r.body.agent.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(Date.parse(r.body.agent.lastHeartbeatAt)).toBeGreaterThan(0)
  })

  it('name rules: invalid 400 validation_error, duplicate in the project 409, same name in another project fine; unknown harness and role 400', async () => {
    for (const name of ['-dash', 'has space', 'a/b', 'x'.repeat(64), '.dot']) {
      const r = await create({name})
      expect(r.status, name).toBe(400)
      expect(r.body.error.code).toBe('validation_error')
    }
    expect((await create({name: 'dup'})).status).toBe(201)
    const dup = await create({name: 'dup'})
    expect(dup.status).toBe(409)
    expect(dup.body.error.code).toBe('conflict')
    expect((await create({name: 'dup', projectId: otherProjectId})).status).toBe(201)
    const harness = await create({name: 'h', harnessConfig: 'no-such-harness'})
    expect(harness.status).toBe(400)
    expect(harness.body.error).toMatchObject({code: 'validation_error', details: {fields: [{path: 'harnessConfig'}]}})
    expect(harness.body.error.message).toMatch(/known: .*shell/)
    expect((await create({name: 'r', role: 'emperor'})).status).toBe(400)
    expect((await create({name: 'p', projectId: 'no-such-project'})).status).toBe(404)
    expect((await hub.request('POST', '/api/v1/agents', {body: {name: 'x'}})).status).toBe(400)
  })

  it('the creator is recorded: a member user; an agent with ScopeAgentLifecycle creating a child records kind agent', async () => {
    const byMember = await create({name: 'members-own'}, member.token)
    expect(byMember.status).toBe(201)
    expect(byMember.body.agent.createdBy).toEqual({kind: 'user', id: member.user.id})

    const parent = (await create({name: 'parent'})).body.agent
    const child = await create({name: 'child'}, hub.tokenOf(parent.id))
    expect(child.status).toBe(201)
    expect(child.body.agent.createdBy).toEqual({kind: 'agent', id: parent.id})

    // A baseline agent lacks the scope; no agent creates outside its own project.
    const baseline = (await create({name: 'baseline-agent', role: 'baseline'})).body.agent
    const refused = await create({name: 'grandchild'}, hub.tokenOf(baseline.id))
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('forbidden')
    expect((await create({name: 'elsewhere', projectId: otherProjectId}, hub.tokenOf(parent.id))).status).toBe(404)
    // The non-member cannot create here.
    expect((await create({name: 'intruder'}, stranger.token)).status).toBe(404)
  })

  it('list filters by project (projectId, grove), creator (userId) and phase; the project-scoped list answers the same', async () => {
    const all = await hub.request('GET', '/api/v1/agents')
    expect(all.status).toBe(200)
    expect(all.body.agents.length).toBeGreaterThanOrEqual(5)
    const inAlpha = await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)
    expect(inAlpha.body.agents.every((a: {projectId: string}) => a.projectId === projectId)).toBe(true)
    expect(names(await hub.request('GET', '/api/v1/agents?grove=alpha'))).toEqual(names(inAlpha))
    expect(names(await hub.request('GET', `/api/v1/projects/${projectId}/agents`))).toEqual(names(inAlpha))
    expect(names(await hub.request('GET', '/api/v1/groves/alpha/agents'))).toEqual(names(inAlpha))
    expect(names(await hub.request('GET', `/api/v1/agents?projectId=${otherProjectId}`))).toEqual(['dup'])

    expect(names(await hub.request('GET', `/api/v1/agents?userId=${member.user.id}`))).toEqual(['members-own'])
    await hub.request('POST', '/api/v1/agents/dup/stop'.replace('dup', (await hub.request('GET', `/api/v1/projects/${projectId}/agents/dup`)).body.agent.id))
    const stopped = await hub.request('GET', `/api/v1/agents?phase=stopped&projectId=${projectId}`)
    expect(names(stopped)).toEqual(['dup'])
    expect(names(await hub.request('GET', `/api/v1/agents?phase=running&projectId=${projectId}`))).not.toContain('dup')
    expect((await hub.request('GET', '/api/v1/agents?bogus=1')).status).toBe(400)
  })

  it('visibility: a non-member sees no agents and gets 404 on one; a member sees the project; an agent sees only its project', async () => {
    const first = (await hub.request('GET', `/api/v1/projects/${projectId}/agents/first`)).body.agent
    expect((await hub.request('GET', '/api/v1/agents', {token: stranger.token})).body.agents).toEqual([])
    // Listing the agents of a project the caller cannot see is the same 404 as an unknown project.
    const strangerList = await hub.request('GET', `/api/v1/agents?projectId=${projectId}`, {token: stranger.token})
    expect(strangerList.status).toBe(404)
    expect(strangerList.body.error.code).toBe('not_found')
    const typo = await hub.request('GET', '/api/v1/agents?projectId=no-such-project')
    expect(typo.status).toBe(404)
    expect(typo.body.error.code).toBe('not_found')
    expect((await hub.request('GET', '/api/v1/projects/no-such-project/agents')).status).toBe(404)
    const hidden = await get(first.id, stranger.token)
    expect(hidden.status).toBe(404)
    expect(hidden.body.error.code).toBe('not_found')
    expect((await hub.request('GET', `/api/v1/projects/${projectId}/agents/first`, {token: stranger.token})).status).toBe(404)
    expect((await hub.request('DELETE', `/api/v1/agents/${first.id}`, {token: stranger.token})).status).toBe(404)

    expect((await get(first.id, member.token)).status).toBe(200)
    expect(names(await hub.request('GET', '/api/v1/agents', {token: member.token}))).toContain('first')

    const agentView = await hub.request('GET', '/api/v1/agents', {token: hub.tokenOf(first.id)})
    expect(agentView.body.agents.every((a: {projectId: string}) => a.projectId === projectId)).toBe(true)
    const dupElsewhere = (await hub.request('GET', `/api/v1/projects/${otherProjectId}/agents/dup`)).body.agent
    expect((await get(dupElsewhere.id, hub.tokenOf(first.id))).status).toBe(404)
  })

  it('project-scoped forms find an agent by name or ID, under projects or groves, by project ID or slug; a wrong project is 404', async () => {
    const first = (await hub.request('GET', `/api/v1/projects/${projectId}/agents/first`)).body.agent
    for (const url of [`/api/v1/projects/${projectId}/agents/first`, `/api/v1/projects/alpha/agents/first`, `/api/v1/projects/${projectId}/agents/${first.id}`, `/api/v1/groves/alpha/agents/first`, `/api/v1/groves/${projectId}/agents/${first.id}`]) {
      const r = await hub.request('GET', url)
      expect(r.status, url).toBe(200)
      expect(r.body.agent.id).toBe(first.id)
    }
    expect((await hub.request('GET', `/api/v1/projects/${otherProjectId}/agents/first`)).status).toBe(404)
    expect((await hub.request('GET', `/api/v1/projects/${otherProjectId}/agents/${first.id}`)).status).toBe(404)
    expect((await hub.request('GET', '/api/v1/projects/no-such/agents/first')).status).toBe(404)
    // Top-level takes the ID only.
    expect((await get('first')).status).toBe(404)

    const made = await hub.request('POST', '/api/v1/groves/beta/agents', {body: {name: 'scoped-create'}})
    expect(made.status).toBe(201)
    expect(made.body.agent.projectId).toBe(otherProjectId)
  })

  it('stop, start and restart (both forms) answer {agent}; stop archives the output; start dispatches again with a new token', async () => {
    const a = (await create({name: 'cycler'})).body.agent
    const token1 = hub.tokenOf(a.id)
    const stop = await hub.request('POST', `/api/v1/projects/alpha/agents/cycler/stop`, {body: {}})
    expect(stop.status).toBe(200)
    expect(stop.body.agent).toMatchObject({id: a.id, phase: 'stopped', activity: null})
    expect(hub.fake.requests('agent.stop').some((m) => (m.params as {agentId: string}).agentId === a.id)).toBe(true)
    expect((await hub.request('GET', `/api/v1/agents/${a.id}/logs`)).body).toBe(`final output of ${a.id}`)
    expect((await hub.request('GET', '/api/v1/auth/me', {token: token1})).status).toBe(401)

    const start = await hub.request('POST', `/api/v1/agents/${a.id}/start`, {body: {}})
    expect(start.status).toBe(200)
    expect(start.body.agent).toMatchObject({phase: 'running', brokerId: hub.fake.brokerId})
    const token2 = hub.tokenOf(a.id)
    expect(token2).not.toBe(token1)
    expect((await hub.request('GET', '/api/v1/auth/me', {token: token2})).status).toBe(200)
    // Start on a running agent changes nothing.
    const starts = hub.fake.requests('agent.start').length
    expect((await hub.request('POST', `/api/v1/agents/${a.id}/start`, {body: {}})).body.agent.phase).toBe('running')
    expect(hub.fake.requests('agent.start').length).toBe(starts)

    const restart = await hub.request('POST', `/api/v1/groves/${projectId}/agents/cycler/restart`, {body: {}})
    expect(restart.status).toBe(200)
    expect(restart.body.agent.phase).toBe('running')
    expect(hub.fake.requests('agent.start').length).toBe(starts + 1)
    // Live logs come from the broker while the agent runs.
    expect((await hub.request('GET', `/api/v1/projects/alpha/agents/cycler/logs`)).body).toBe(`output of ${a.id}`)
    // The terminal bytes as they came, asked for.
    expect((await hub.request('GET', `/api/v1/projects/alpha/agents/cycler/logs?raw=true`)).body).toBe(`output of ${a.id}\n`)
    // Lifecycle needs the scope: a member may, a stranger gets 404.
    expect((await hub.request('POST', `/api/v1/agents/${a.id}/stop`, {body: {}, token: stranger.token})).status).toBe(404)
  })

  it('status reports: the agent on itself changes activity and detail at once; bad values 400; no scope on another agent 403; another project 404', async () => {
    const a = (await create({name: 'reporter'})).body.agent
    const token = hub.tokenOf(a.id)
    const report = (body: unknown, t: string | null = token, id = a.id) => hub.request('POST', `/api/v1/agents/${id}/status`, {body, token: t})
    const ok = await report({activity: 'thinking', detail: 'reading the test', heartbeat: true})
    expect(ok.status).toBe(200)
    expect((await get(a.id)).body.agent).toMatchObject({phase: 'running', activity: 'thinking', detail: 'reading the test'})
    await report({activity: 'executing', detail: 'npm test'})
    expect((await get(a.id)).body.agent).toMatchObject({activity: 'executing', detail: 'npm test'})
    // Flushed to the database, the state is the same.
    await waitFor(async () => (await hub.store.agents.get(a.id))?.activity === 'executing', 5000, 'the report flushed')
    expect(await hub.store.agents.get(a.id)).toMatchObject({activity: 'executing', detail: 'npm test'})

    const badPhase = await report({phase: 'sleeping'})
    expect(badPhase.status).toBe(400)
    expect(badPhase.body.error).toMatchObject({code: 'validation_error', details: {fields: [{path: 'phase'}]}})
    expect((await report({activity: 'dreaming'})).status).toBe(400)
    expect((await report({mood: 'happy'})).status).toBe(400)

    const baseline = (await create({name: 'nosy', role: 'baseline'})).body.agent
    const other = await report({activity: 'idle'}, hub.tokenOf(baseline.id))
    expect(other.status).toBe(403)
    const foreign = (await hub.request('GET', `/api/v1/projects/beta/agents/dup`)).body.agent
    expect((await report({activity: 'idle'}, token, foreign.id)).status).toBe(404)
    expect((await report({activity: 'idle'}, token, 'no-such-agent')).status).toBe(404)
    expect((await report({activity: 'idle'}, null)).status).toBe(401)
    // A user holding the project may report too (e.g. a supervisor).
    expect((await report({activity: 'idle'}, hub.devToken)).status).toBe(200)
  })

  it('a broker that no longer runs an agent stops it, and a report still waiting to be written does not bring it back', async () => {
    const a = (await create({name: 'vanishing'})).body.agent
    // The agent's last report says running; it is still in memory when the broker's hello
    // (which no longer names the agent) is reconciled.
    expect((await hub.request('POST', `/api/v1/agents/${a.id}/status`, {body: {phase: 'running', activity: 'thinking'}, token: hub.tokenOf(a.id)})).status).toBe(200)
    await hub.services.agents.reconcile(a.brokerId, await hub.services.agents.agentsAtHello(a.brokerId), [])
    expect((await get(a.id)).body.agent).toMatchObject({phase: 'stopped', activity: null, error: expect.stringMatching(/no longer runs/)})
    // Its token ends with it (a sandbox the broker lost may still be running): cached before, refused now.
    expect((await hub.request('GET', '/api/v1/auth/me', {token: hub.tokenOf(a.id)})).status).toBe(401)
    expect((await hub.request('POST', '/api/v1/agents', {body: {name: 'child-of-lost'}, token: hub.tokenOf(a.id)})).status).toBe(401)
    // Past the writer's next batches, the stop stands in the database and in reads.
    await new Promise((r) => setTimeout(r, 600))
    expect(await hub.store.agents.get(a.id)).toMatchObject({phase: 'stopped'})
    expect((await get(a.id)).body.agent).toMatchObject({phase: 'stopped', activity: null})
  })

  it('a running agent not heard from within the heartbeat timeout reads as offline; a report brings it back', async () => {
    const a = (await create({name: 'quiet'})).body.agent
    expect((await get(a.id)).body.agent.activity).toBe('idle')
    clock.advance(HEARTBEAT_TIMEOUT_MS + 5000)
    try {
      expect((await get(a.id)).body.agent).toMatchObject({phase: 'running', activity: 'offline'})
      const listed = (await hub.request('GET', `/api/v1/agents?projectId=${projectId}&phase=running`)).body.agents.find((x: {id: string}) => x.id === a.id)
      expect(listed.activity).toBe('offline')
      await hub.request('POST', `/api/v1/agents/${a.id}/status`, {body: {activity: 'idle', heartbeat: true}, token: hub.tokenOf(a.id)})
      expect((await get(a.id)).body.agent.activity).toBe('idle')
    } finally {
      clock.advance(-(HEARTBEAT_TIMEOUT_MS + 5000))
    }
  })

  it('agent token: whoami is kind agent; refresh outside the window 409, inside it a fresh token; another agent may not refresh it', async () => {
    const a = (await create({name: 'refresher'})).body.agent
    const token = hub.tokenOf(a.id)
    const me = await hub.request('GET', '/api/v1/auth/me', {token})
    expect(me.body).toEqual({principal: {kind: 'agent', id: a.id, projectId}, credentialKind: 'agent', systemAdmin: false})

    const early = await hub.request('POST', `/api/v1/agents/${a.id}/token/refresh`, {token})
    expect(early.status).toBe(409)
    expect(early.body.error.code).toBe('conflict')

    const jump = AGENT_TOKEN_TTL_MS - REFRESH_WINDOW_MS + 60_000
    clock.advance(jump)
    try {
      const other = (await create({name: 'other-refresher'})).body.agent
      expect((await hub.request('POST', `/api/v1/agents/${a.id}/token/refresh`, {token: hub.tokenOf(other.id)})).status).toBe(403)
      const fresh = await hub.request('POST', `/api/v1/agents/${a.id}/token/refresh`, {token})
      expect(fresh.status).toBe(200)
      expect(fresh.body.token).toMatch(/^svc_agt_/)
      expect(fresh.body.token).not.toBe(token)
      expect(Date.parse(fresh.body.expiresAt)).toBeGreaterThan(clock.now().getTime() + AGENT_TOKEN_TTL_MS - 60_000)
      expect((await hub.request('GET', '/api/v1/auth/me', {token: fresh.body.token})).body.principal.id).toBe(a.id)
      // Refreshed again with the same old token: still two live tokens, never more (the first
      // fresh one is revoked), so a loop of refreshes mints no pile of valid tokens.
      const again = await hub.request('POST', `/api/v1/agents/${a.id}/token/refresh`, {token})
      expect(again.status).toBe(200)
      expect((await hub.request('GET', '/api/v1/auth/me', {token: fresh.body.token})).status).toBe(401)
      expect((await hub.request('GET', '/api/v1/auth/me', {token: again.body.token})).status).toBe(200)
      expect((await hub.request('GET', '/api/v1/auth/me', {token})).status).toBe(200)
    } finally {
      clock.advance(-jump)
    }
  })

  it('an agent token revoked straight in the database (announced to no replica) is refused once the cache entry lapses: the report 401 and not written, other routes 401 too', async () => {
    const a = (await create({name: 'revoked-elsewhere'})).body.agent
    const token = hub.tokenOf(a.id)
    const report = (detail: string) => hub.request('POST', `/api/v1/agents/${a.id}/status`, {body: {activity: 'executing', detail}, token})
    // Reported twice: the second resolves the token from this Hub's cache, no read.
    expect((await report('before 1')).status).toBe(200)
    expect((await report('before 2')).status).toBe(200)
    // Revoked behind the Hub's back: no announcement drops it (agent-token-revocation covers
    // the announced case). The cache's TTL bounds how long it is still taken.
    await hub.store.agents.revokeTokens(a.id, iso(new Date()))
    clock.advance(AGENT_TOKEN_CACHE_TTL_MS)
    try {
      const refused = await report('after')
      expect(refused.status).toBe(401)
      expect(refused.body.error.code).toBe('unauthorized')
      expect((await get(a.id)).body.agent).toMatchObject({phase: 'running', activity: 'executing', detail: 'before 2'})
      expect((await hub.store.agents.get(a.id))?.detail).toBe('before 2')
      expect((await report('again')).status).toBe(401)
      expect((await hub.request('GET', '/api/v1/auth/me', {token})).status).toBe(401)
      expect((await hub.request('GET', `/api/v1/agents/${a.id}`, {token})).status).toBe(401)
    } finally {
      clock.advance(-AGENT_TOKEN_CACHE_TTL_MS)
    }
  })

  it('delete answers {agent}, stops it on the broker, revokes its token (401), hides it and frees its name', async () => {
    const a = (await create({name: 'doomed'})).body.agent
    const token = hub.tokenOf(a.id)
    expect((await hub.request('GET', '/api/v1/auth/me', {token})).status).toBe(200)
    const del = await hub.request('DELETE', `/api/v1/projects/alpha/agents/doomed`)
    expect(del.status).toBe(200)
    expect(del.body.agent).toMatchObject({id: a.id, phase: 'stopped'})
    expect(hub.fake.requests('agent.stop').some((m) => (m.params as {agentId: string}).agentId === a.id)).toBe(true)
    const after = await hub.request('GET', '/api/v1/auth/me', {token})
    expect(after.status).toBe(401)
    expect((await hub.request('POST', `/api/v1/agents/${a.id}/status`, {body: {activity: 'idle'}, token})).status).toBe(401)
    expect((await get(a.id)).status).toBe(404)
    expect(names(await hub.request('GET', `/api/v1/agents?projectId=${projectId}`))).not.toContain('doomed')
    const again = await create({name: 'doomed'})
    expect(again.status).toBe(201)
    expect(again.body.agent.id).not.toBe(a.id)
  })
})
