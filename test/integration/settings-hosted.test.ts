import {afterEach, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'

const FILE = (extra = '') => ({'.svc/settings.yaml': `schema_version: "1"\nserver:\n  hub:\n    hub_name: From File\n    admin_emails: [boss@example.test]\nquotas:\n  max_agents_per_project: 7\n${extra}`})

/** Hosted Hubs: Layer-1 sections in the database, save rules 1, 2 and 8, the origin state machine. */
describeEachDialect('settings: hosted server-config', (dialect) => {
  let hub: TestHub | undefined
  afterEach(async () => {
    await hub?.dispose()
    hub = undefined
  })
  const start = async (files = FILE(), env: Record<string, string> = {}) => {
    hub = await startTestHub(dialect, {flags: {hosted: true}, files, env})
    const admin = await createUser(hub, {systemAdmin: true})
    return {hub, token: admin.token}
  }

  it('GET reports mode, layer0_editable false, env_overrides, sections seeded from bootstrap', async () => {
    const {hub, token} = await start(FILE(), {SVC_SERVER_HUB_HUBNAME: 'From Env'})
    const r = await hub.request('GET', '/api/v1/admin/server-config', {token})
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({mode: 'hosted', layer0_editable: false})
    expect(r.body.env_overrides).toContain('server.hub.hub_name')
    // SVC_SERVER_* on a Layer-1 key changes the seed.
    expect(r.body.server.hub.hub_name).toBe('From Env')
    expect(r.body.quotas.max_agents_per_project).toBe(7)
    expect(r.body.sections.hub).toMatchObject({origin: 'seeded', source: 'environment', revision: 1})
    expect(r.body.sections.quotas).toMatchObject({origin: 'seeded', source: 'settings_file', revision: 1})
    expect(r.body.sections.profiling).toMatchObject({origin: 'seeded', revision: 0})
  })

  it('echoing GET is a 200 that writes nothing', async () => {
    const {hub, token} = await start()
    const got = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: got})
    expect(r.status).toBe(200)
    expect(r.body.applied).toEqual([])
    expect(r.body.sections).toEqual({})
    const again = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    expect(again.sections).toEqual(got.sections)
  })

  it('a Layer-1 save goes to the database, becomes managed, applies at once, and survives a restart over a changed file', async () => {
    const {hub, token} = await start()
    const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {quotas: {max_agents_per_project: 3}, server: {hub: {hub_name: 'Saved'}}}})
    expect(r.status).toBe(200)
    expect(r.body.applied.sort()).toEqual(['hub', 'quotas'])
    expect(r.body.sections.quotas).toEqual({status: 'saved', revision: 2})
    expect(r.body.notices.join(' ')).toMatch(/now managed/)
    expect(r.body.reload).toBeUndefined()
    expect(r.body.file_keys).toBeUndefined()
    expect(hub.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(3)
    // Layer-1 keys the domain reads off the Hub configuration follow the database at once.
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {server: {hub: {admin_emails: ['new@example.test']}, auth: {user_access_mode: 'domains', authorized_domains: ['example.test']}}}})).status).toBe(200)
    expect(hub.config.adminEmails).toEqual(['new@example.test'])
    expect(hub.config.userAccessMode).toBe('domains')
    expect(hub.config.authorizedDomains).toEqual(['example.test'])
    const got = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    expect(got.quotas.max_agents_per_project).toBe(3)
    expect(got.sections.quotas).toMatchObject({origin: 'managed', source: 'admin_api', revision: 2, superseded: true})
    expect(got.sections.quotas.updated_by).toMatch(/^user:/)
  })

  it('layer0_rejected for a changed Layer-0 field, even an explicit false, empty string or 0; unchanged ones are ignored', async () => {
    const {hub, token} = await start()
    const got = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    // Explicit false, empty string and 0 count as changes when GET shows something else.
    expect(got.server.database.driver).not.toBe('')
    expect(got.server.broker.port).not.toBe(0)
    for (const body of [{server: {database: {driver: 'postgres', url: 'postgres://x/y'}}}, {server: {storage: {force_path_style: false}}}, {server: {hub: {port: 1234}}}, {server: {storage: {bucket: 'b'}}}, {server: {log_level: 'debug'}}, {server: {database: {driver: ''}}}, {server: {broker: {port: 0}}}]) {
      const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body})
      expect(r.status, JSON.stringify(body)).toBe(422)
      expect(r.body.error.code).toBe('layer0_rejected')
    }
    const unchanged = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {server: {hub: {port: got.server.hub.port}, database: got.server.database}, quotas: {max_agents_per_project: 2}}})
    expect(unchanged.status).toBe(200)
    expect(unchanged.body.applied).toEqual(['quotas'])
    // A rejected save wrote nothing, even its Layer-1 part.
    const mixed = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {server: {hub: {port: 1}}, quotas: {max_agents_per_project: 9}}})
    expect(mixed.status).toBe(422)
    expect(hub.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(2)
  })

  it('keys with no database home: unpersisted_keys_rejected; unknown keys: unclassified_keys_rejected; unchanged: ignored', async () => {
    const {hub, token} = await start()
    for (const [body, code] of [
      [{schema_version: '2'}, 'unpersisted_keys_rejected'],
      [{active_profile: 'x'}, 'unpersisted_keys_rejected'],
      [{workspace_path: '/w'}, 'unpersisted_keys_rejected'],
      [{auto_inject_gcloud_adc: false}, 'unpersisted_keys_rejected'],
      [{default_agent_role: 'baseline'}, 'unpersisted_keys_rejected'],
      [{default_max_agent_role: 'readonly'}, 'unpersisted_keys_rejected'],
      [{default_harness_auth: 'api-key'}, 'unpersisted_keys_rejected'],
      [{no_such_key: 1}, 'unclassified_keys_rejected'],
      [{server: {nope: true}}, 'unclassified_keys_rejected'],
    ] as const) {
      const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body})
      expect(r.status, JSON.stringify(body)).toBe(422)
      expect(r.body.error.code).toBe(code)
    }
    const same = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {schema_version: '1', default_agent_role: 'full'}})
    expect(same.status).toBe(200)
  })

  it('empty body is 400 invalid_request; validation_failed inline per section; invalid_timezone; invalid_cloud_identity_mode', async () => {
    const {hub, token} = await start()
    for (const body of [{}, {revisions: {}}]) {
      const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body})
      expect(r.status).toBe(400)
      expect(r.body.error.code).toBe('invalid_request')
    }
    const none = await hub.app.inject({method: 'PUT', url: '/api/v1/admin/server-config', headers: {authorization: `Bearer ${token}`}})
    expect(none.statusCode).toBe(400)
    const bad = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {quotas: {max_agents_per_project: 'many'}, telemetry: {cloud: {protocol: 'smoke'}}}})
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('validation_failed')
    expect(Object.keys(bad.body.error.details.sections).sort()).toEqual(['quotas', 'telemetry'])
    for (const tz of ['Local', 'Mars/Olympus', 'not a zone']) {
      const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_timezone: tz}})
      expect(r.status).toBe(422)
      expect(r.body.error.code).toBe('invalid_timezone')
    }
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_timezone: 'Europe/Paris'}})).status).toBe(200)
    const mode = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_cloud_identity_mode: 'block'}})
    expect(mode.status).toBe(422)
    expect(mode.body.error.code).toBe('invalid_cloud_identity_mode')
    for (const m of ['Block', 'Passthrough']) expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_cloud_identity_mode: m}})).status).toBe(200)
    // Assign needs a verified hub-scoped service account (test/integration/settings-cloud-identity.test.ts).
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_cloud_identity_mode: 'Assign'}})).body.error.code).toBe('invalid_cloud_identity_mode')
    // Agent defaults clear to null.
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_max_turns: 5, default_max_duration: '2h', default_max_model_calls: 9, default_resources: {cpu: '2'}}})).status).toBe(200)
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_max_turns: null, default_max_duration: null, default_max_model_calls: null, default_resources: null}})).status).toBe(200)
    const got = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    // Stored as null: the default constraint is gone.
    for (const k of ['default_max_turns', 'default_max_duration', 'default_max_model_calls', 'default_resources']) expect(got[k], k).toBeNull()
    const stored = (await hub.store.settingsSections.get('agent_defaults'))!.value
    expect(stored).toMatchObject({default_max_turns: null, default_max_duration: null, default_max_model_calls: null, default_resources: null})
    expect(hub.services.settings!.agentSettings().defaults.default_max_turns ?? null).toBeNull()
    expect(got.default_timezone).toBe('Europe/Paris')
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {default_max_turns: 0}})).body.error.code).toBe('validation_failed')
  })

  it('a stale revision answers 409 revision_conflict and changes nothing (no section of the save)', async () => {
    const {hub, token} = await start()
    const got = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    const ok = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {quotas: {max_agents_per_project: 4}, revisions: {quotas: got.sections.quotas.revision}}})
    expect(ok.status).toBe(200)
    const stale = await hub.request('PUT', '/api/v1/admin/server-config', {
      token,
      body: {image_registry: 'reg.example/x', quotas: {max_agents_per_project: 5}, revisions: {image_registry: got.sections.image_registry.revision, quotas: got.sections.quotas.revision}},
    })
    expect(stale.status).toBe(409)
    expect(stale.body.error.code).toBe('revision_conflict')
    expect(stale.body.error.details).toMatchObject({section: 'quotas', applied: []})
    const after = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    expect(after.quotas.max_agents_per_project).toBe(4)
    expect(after.image_registry).toBe('')
    expect(after.sections.image_registry.revision).toBe(got.sections.image_registry.revision)
  })

  it('hub_owned_keys_rejected: broker ID or token changed or cleared; the masked token echoes unchanged', async () => {
    const {hub, token} = await start({'.svc/settings.yaml': 'schema_version: "1"\nserver:\n  broker:\n    broker_id: b-1\n    broker_token: secret-token\n'})
    const got = (await hub.request('GET', '/api/v1/admin/server-config', {token})).body
    expect(got.server.broker.broker_token).toBe('********')
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {server: {broker: {broker_id: 'b-1', broker_token: '********'}}}})).status).toBe(200)
    for (const broker of [{broker_id: 'b-2'}, {broker_token: ''}, {broker_id: null}]) {
      const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {server: {broker}}})
      expect(r.status, JSON.stringify(broker)).toBe(422)
      expect(r.body.error.code).toBe('hub_owned_keys_rejected')
    }
  })

  it('origin state machine: restart re-syncs a seeded section only when bootstrap changed (no revision bump otherwise); managed sections are kept; reset deletes the row', async () => {
    const {hub: first, token} = await start()
    const url = first.env.SVC_SERVER_DATABASE_URL
    const home = first.home
    await first.request('PUT', '/api/v1/admin/server-config', {token, body: {server: {hub: {hub_name: 'Managed'}}}})
    await first.close()
    const {resolveBootstrap} = await import('../../src/config/bootstrap.js')
    const {createHub} = await import('../../src/main.js')
    const pino = (await import('pino')).default
    const {writeFileSync} = await import('node:fs')
    const boot = async () => {
      const env = {...first.env}
      return createHub(resolveBootstrap({port: 0, hosted: true}, env), {env, logger: pino({level: 'silent'})})
    }
    // Unchanged bootstrap: no revision bump.
    let h = await boot()
    let s = (h.services.settings!.view() as any).sections
    expect(s.quotas).toMatchObject({origin: 'seeded', revision: 1})
    expect(s.hub).toMatchObject({origin: 'managed', revision: 2})
    await h.close()
    // Changed bootstrap: seeded quotas re-synced (revision 2), managed hub kept.
    writeFileSync(`${home}/.svc/settings.yaml`, 'schema_version: "1"\nserver:\n  hub:\n    hub_name: New File\nquotas:\n  max_agents_per_project: 8\n')
    h = await boot()
    const v = h.services.settings!.view() as any
    expect(v.sections.quotas).toMatchObject({origin: 'seeded', revision: 2})
    expect(v.quotas.max_agents_per_project).toBe(8)
    expect(v.server.hub.hub_name).toBe('Managed')
    expect(v.sections.hub.superseded).toBe(true)
    // Reset to bootstrap deletes the row and falls back at once.
    const admin = await createUser({...h, request: undefined} as never, {systemAdmin: true})
    const del = await h.app.inject({method: 'DELETE', url: '/api/v1/admin/server-config/sections/hub', headers: {authorization: `Bearer ${admin.token}`}})
    expect(del.statusCode).toBe(200)
    expect(del.json()).toMatchObject({section: 'hub', deleted: true})
    const after = h.services.settings!.view() as any
    expect(after.server.hub.hub_name).toBe('New File')
    expect(after.sections.hub).toMatchObject({origin: 'seeded', revision: 0})
    expect((await h.app.inject({method: 'DELETE', url: '/api/v1/admin/server-config/sections/nope', headers: {authorization: `Bearer ${admin.token}`}})).statusCode).toBe(404)
    await h.close()
    // Re-seeded at the next boot.
    h = await boot()
    expect((h.services.settings!.view() as any).sections.hub).toMatchObject({origin: 'seeded', revision: 1})
    await h.close()
    void url
    hub = {...first, dispose: async () => (first as TestHub).dispose().catch(() => {})} as TestHub
  })
})
