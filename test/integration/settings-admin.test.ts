import pino from 'pino'
import {afterEach, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub, type Hub} from '../../src/main.js'
import {joinFakeBroker, startFakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'

const waitFor = async (cond: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Maintenance, profiling, admin status, loopback routes, replicas and settings read by agents. */
describeEachDialect('settings: admin routes', (dialect) => {
  const open: Array<{dispose?: () => Promise<void>; close?: () => Promise<void>}> = []
  afterEach(async () => {
    for (const h of open.reverse()) await (h.dispose ?? h.close)!.call(h).catch(() => {})
    open.length = 0
  })
  const start = async (opts: Parameters<typeof startTestHub>[1] = {}) => {
    const hub = await startTestHub(dialect, opts)
    open.push(hub)
    return hub
  }
  /** A second Hub process on the same database (a replica). */
  const replica = async (hub: TestHub, hosted: boolean): Promise<Hub> => {
    const env = {...hub.env}
    const h = await createHub(resolveBootstrap({port: 0, hosted}, env), {env, logger: pino({level: 'silent'})})
    open.unshift(h)
    return h
  }

  it('maintenance: non-admin mutations get 503 system_maintenance; reads, health, sign-in and admins pass; the row survives a restart', async () => {
    const hub = await start()
    const user = await createUser(hub)
    expect((await hub.request('GET', '/api/v1/admin/maintenance')).body).toMatchObject({enabled: false, break_glass: false, message: '', updated_by: null})
    const on = await hub.request('PUT', '/api/v1/admin/maintenance', {body: {enabled: true, message: 'upgrading'}})
    expect(on.status).toBe(200)
    expect(on.body).toMatchObject({enabled: true, message: 'upgrading', updated_by: 'user:dev-user'})
    const refused = await hub.request('POST', '/api/v1/projects/register', {token: user.token, body: {name: 'p', gitRemote: 'https://x.example/p.git'}})
    expect(refused.status).toBe(503)
    expect(refused.body.error).toMatchObject({code: 'system_maintenance', message: 'upgrading'})
    expect((await hub.request('GET', '/api/v1/projects', {token: user.token})).status).toBe(200)
    expect((await hub.request('GET', '/healthz', {token: null})).status).toBe(200)
    expect((await hub.request('POST', '/api/v1/auth/logout', {token: null, body: {}})).status).toBe(200)
    // The dev user is a system admin: its mutations pass.
    expect((await hub.request('POST', '/api/v1/projects/register', {body: {name: 'p2', gitRemote: 'https://x.example/p2.git'}})).status).not.toBe(503)
    await hub.close()
    const again = await replica(hub, false)
    expect(again.services.settings!.maintenance.get()).toMatchObject({enabled: true, message: 'upgrading'})
  })

  it('maintenance: agents\' status reports, heartbeats and token refreshes pass; their other mutations and users\' status reports are refused', async () => {
    const hub = await startFakeBrokerHub(dialect)
    open.push(hub)
    const agent = (await hub.request('POST', '/api/v1/agents', {body: {name: 'live', projectId: 'default'}})).body.agent
    const token = hub.tokenOf(agent.id)
    const user = await createUser(hub)
    expect((await hub.request('PUT', '/api/v1/admin/maintenance', {body: {enabled: true, message: 'down'}})).status).toBe(200)
    const status = await hub.request('POST', `/api/v1/agents/${agent.id}/status`, {token, body: {activity: 'thinking', detail: 'during maintenance'}})
    expect(status.status).toBe(200)
    expect((await hub.request('POST', `/api/v1/agents/${agent.id}/status`, {token, body: {heartbeat: true}})).status).toBe(200)
    // A fresh token is outside its refresh window: the domain answers (409), not the gate (503).
    const refreshed = await hub.request('POST', `/api/v1/agents/${agent.id}/token/refresh`, {token})
    expect(refreshed.status).toBe(409)
    expect(refreshed.body.error.code).toBe('conflict')
    // The report was accepted, not just answered: the agent's activity changed.
    const seen = (await hub.request('GET', `/api/v1/agents/${agent.id}`)).body.agent
    expect(seen).toMatchObject({activity: 'thinking', detail: 'during maintenance'})
    // Anything else an agent mutates is still refused.
    const child = await hub.request('POST', '/api/v1/agents', {token, body: {name: 'child', projectId: 'default'}})
    expect(child.status).toBe(503)
    expect(child.body.error.code).toBe('system_maintenance')
    // A user's status report on an agent is a user mutation: refused.
    const byUser = await hub.request('POST', `/api/v1/agents/${agent.id}/status`, {token: user.token, body: {activity: 'idle'}})
    expect(byUser.status).toBe(503)
  })

  it('maintenance on a replica: a save on one Hub is enforced by the other', async () => {
    const hub = await start({flags: {hosted: true}})
    const admin = await createUser(hub, {systemAdmin: true})
    const other = await replica(hub, true)
    await hub.request('PUT', '/api/v1/admin/maintenance', {token: admin.token, body: {enabled: true}})
    await waitFor(() => other.services.settings!.maintenance.active())
  })

  it('break-glass on a workstation: admin_mode at start keeps this run in maintenance; a save updates the row but cannot end it', async () => {
    const hub = await start({env: {SVC_SERVER_ADMIN_MODE: 'true'}})
    expect((await hub.request('GET', '/api/v1/admin/maintenance')).body).toMatchObject({enabled: true, break_glass: true})
    // No row yet and `enabled` omitted: the current state (on) is stored.
    await hub.request('PUT', '/api/v1/admin/maintenance', {body: {message: 'm'}})
    expect(await hub.store.hubSettings.get('maintenance')).toMatchObject({enabled: true, message: 'm'})
    const off = await hub.request('PUT', '/api/v1/admin/maintenance', {body: {enabled: false}})
    expect(off.body).toMatchObject({enabled: true, break_glass: true, message: 'm'})
    expect(await hub.store.hubSettings.get('maintenance')).toMatchObject({enabled: false})
    // A row exists and `enabled` is omitted: the row's value is kept.
    await hub.request('PUT', '/api/v1/admin/maintenance', {body: {message: 'n'}})
    expect(await hub.store.hubSettings.get('maintenance')).toMatchObject({enabled: false, message: 'n'})
  })

  it('hosted: admin_mode is only the state until a row exists; the row then wins over the node environment', async () => {
    const hub = await start({flags: {hosted: true}, env: {SVC_SERVER_ADMIN_MODE: 'true'}})
    const admin = await createUser(hub, {systemAdmin: true})
    expect((await hub.request('GET', '/api/v1/admin/maintenance', {token: admin.token})).body).toMatchObject({enabled: true, break_glass: false})
    const off = await hub.request('PUT', '/api/v1/admin/maintenance', {token: admin.token, body: {enabled: false}})
    expect(off.body).toMatchObject({enabled: false, break_glass: false})
  })

  it('admin routes: a system admin on session or dev; user access tokens and non-admins refused', async () => {
    const hub = await start()
    const user = await createUser(hub)
    const notAdmin = await hub.request('GET', '/api/v1/admin/server-config', {token: user.token})
    expect(notAdmin.status).toBe(403)
    expect(notAdmin.body.error.code).toBe('not_system_admin')
    const projectId = (await hub.request('GET', '/api/v1/projects')).body.projects[0].id
    const pat = await hub.request('POST', '/api/v1/auth/tokens', {body: {name: 't', projectId, permissions: ['project.read']}})
    expect(pat.status).toBe(201)
    for (const [m, u, body] of [['GET', '/api/v1/admin/server-config'], ['PUT', '/api/v1/admin/profiling', {readiness_marks: true}], ['PUT', '/api/v1/admin/maintenance', {enabled: true}]] as const) {
      const r = await hub.request(m, u, {token: pat.body.token, body})
      expect(r.status, u).toBe(403)
      expect(r.body.error.code).toBe('credential_kind_not_allowed')
    }
    const status = await hub.request('GET', '/api/v1/admin/status')
    expect(status.body).toMatchObject({systemAdmin: true, credentialKind: 'dev', mode: 'workstation'})
    expect(status.body.permissions).toContain('admin.server_config.write')
    expect((await hub.request('GET', '/api/v1/admin/status', {token: user.token})).body.permissions).toEqual([])
  })

  it('profiling: PUT on an interactive admin session, null resets; GET /api/v1/profiling for any signed-in caller', async () => {
    const hub = await start()
    const user = await createUser(hub)
    expect((await hub.request('GET', '/api/v1/profiling', {token: user.token})).body).toEqual({readinessMarks: false})
    expect((await hub.request('GET', '/api/v1/profiling', {token: null})).status).toBe(401)
    const set = await hub.request('PUT', '/api/v1/admin/profiling', {body: {readiness_marks: true}})
    expect(set.body).toEqual({readiness_marks: true, revision: 1})
    expect((await hub.request('GET', '/api/v1/profiling', {token: user.token})).body).toEqual({readinessMarks: true})
    const stale = await hub.request('PUT', '/api/v1/admin/profiling', {body: {readiness_marks: false, revision: 0}})
    expect(stale.status).toBe(409)
    expect(stale.body.error.code).toBe('revision_conflict')
    expect((await hub.request('GET', '/api/v1/admin/profiling')).body).toEqual({readiness_marks: true, revision: 1})
    expect((await hub.request('PUT', '/api/v1/admin/profiling', {body: {readiness_marks: null}})).body).toEqual({readiness_marks: false, revision: 0})
    expect((await hub.request('PUT', '/api/v1/admin/profiling', {token: user.token, body: {readiness_marks: true}})).status).toBe(403)
  })

  it('profiling.readiness_marks is database only: a settings-file key neither seeds nor applies', async () => {
    const hub = await start({files: {'.svc/settings.yaml': 'schema_version: "1"\nprofiling:\n  readiness_marks: true\n'}})
    expect((await hub.request('GET', '/api/v1/profiling')).body).toEqual({readinessMarks: false})
    expect((await hub.request('GET', '/api/v1/admin/profiling')).body).toEqual({readiness_marks: false, revision: 0})
    expect(await hub.store.settingsSections.get('profiling')).toBeNull()
    expect((await hub.request('GET', '/api/v1/admin/server-config')).body.sections.profiling).toMatchObject({origin: 'seeded', source: 'defaults', revision: 0})
  })

  it('loopback system routes write the profiles, runtimes and image_registry sections; other addresses are refused', async () => {
    const hub = await start()
    const remote = await hub.app.inject({method: 'PUT', url: '/api/v1/system/registry', remoteAddress: '10.1.2.3', headers: {authorization: `Bearer ${hub.devToken}`}, payload: {image_registry: 'r.example'}})
    expect(remote.statusCode).toBe(403)
    expect(remote.json().error.code).toBe('not_loopback')
    expect((await hub.request('PUT', '/api/v1/system/registry', {body: {image_registry: 'r.example'}})).status).toBe(200)
    const rt = await hub.request('PUT', '/api/v1/system/runtime', {body: {runtimes: {local: {type: 'local'}}, profiles: {dev: {runtime: 'local'}}}})
    expect(rt.status).toBe(200)
    const got = (await hub.request('GET', '/api/v1/admin/server-config')).body
    expect(got.image_registry).toBe('r.example')
    expect(got.profiles).toEqual({dev: {runtime: 'local'}})
    expect(got.sections.profiles.origin).toBe('managed')
  })

  it('replicas: a Layer-1 save on one Hub is visible on the other (settings change event)', async () => {
    const hub = await start({flags: {hosted: true}})
    const admin = await createUser(hub, {systemAdmin: true})
    const other = await replica(hub, true)
    const r = await hub.request('PUT', '/api/v1/admin/server-config', {token: admin.token, body: {quotas: {max_agents_per_project: 42}, default_model: 'm-1'}})
    expect(r.status).toBe(200)
    await waitFor(() => other.services.settings!.agentSettings().quotas.maxAgentsPerProject === 42)
    expect((other.services.settings!.view() as any).default_model).toBe('m-1')
    // Reset propagates too.
    await hub.request('DELETE', '/api/v1/admin/server-config/sections/quotas', {token: admin.token})
    await waitFor(() => other.services.settings!.agentSettings().quotas.maxAgentsPerProject !== 42)
  })

  it('agent defaults saved in the database reach the next create at once; clearing to null removes them', async () => {
    const hub = await startFakeBrokerHub(dialect, {files: {'.svc/settings.yaml': 'schema_version: "1"\ndefault_model: file-model\n'}})
    open.push(hub)
    // A second broker, not the co-located one: the saved default_runtime_broker must pick it.
    const other = await joinFakeBroker(hub, 'hub-default')
    open.unshift({close: () => other.close()})
    const save = await hub.request('PUT', '/api/v1/admin/server-config', {body: {default_model: 'db-model', default_timezone: 'Asia/Tokyo', default_max_turns: 12, default_thinking_level: 'high', default_runtime_broker: other.brokerId}})
    expect(save.status).toBe(200)
    const a = (await hub.request('POST', '/api/v1/agents', {body: {name: 'd1', projectId: 'default'}})).body.agent
    expect(a.appliedSettings.defaultModel).toEqual({value: 'db-model', from: 'hub'})
    expect(a.appliedSettings.defaultTimezone).toEqual({value: 'Asia/Tokyo', from: 'hub'})
    expect(a.appliedSettings.defaultMaxTurns).toEqual({value: 12, from: 'hub'})
    expect(a.appliedSettings.defaultAgentRole).toMatchObject({value: 'full'})
    expect(a.brokerId).toBe(other.brokerId)
    // The saved timezone reaches the agent as TZ.
    const start = other.requests('agent.start').find((m) => (m.params as {agentId: string}).agentId === a.id)!
    expect((start.params as {env: Record<string, string>}).env.TZ).toBe('Asia/Tokyo')
    await hub.request('PUT', '/api/v1/admin/server-config', {body: {default_max_turns: null}})
    const b = (await hub.request('POST', '/api/v1/agents', {body: {name: 'd2', projectId: 'default'}})).body.agent
    expect(b.appliedSettings.defaultMaxTurns?.from).not.toBe('hub')
  })

  it('quotas.enforce_broker_quotas: turning it on makes the next over-cap create 429 at once', async () => {
    const hub = await startFakeBrokerHub(dialect, {files: {'.svc/settings.yaml': 'schema_version: "1"\nquotas:\n  max_agents_per_broker: 1\n  enforce_broker_quotas: false\n'}})
    open.push(hub)
    const create = (name: string) => hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default'}})
    expect((await create('one')).status).toBe(201)
    expect((await create('two')).status).toBe(201)
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {quotas: {enforce_broker_quotas: true}}})).status).toBe(200)
    const three = await create('three')
    expect(three.status).toBe(429)
    expect(three.body.error.details.quota).toBe('max_agents_per_broker')
  })
})
