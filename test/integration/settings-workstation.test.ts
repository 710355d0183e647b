import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {fileWriter} from '../../src/domain/settings/save.js'
import {withSettingsLock} from '../../src/config/settings-file-edit.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

const COMMENTED = `# my settings
schema_version: "1"   # keep me
server:
  # the hub block
  hub:
    hub_name: Desk  # name
  log_level: info
unknown_tool_key: {a: 1}  # unknown keys survive
quotas:
  max_agents_per_project: 7
`

/** Workstation Hubs: Layer-1 to the database, Layer-0 and file-only keys to the settings file (rules 3 to 7). */
describeEachDialect('settings: workstation server-config', (dialect) => {
  let hub: TestHub | undefined
  afterEach(async () => {
    fileWriter.write = original
    await hub?.dispose()
    hub = undefined
  })
  const original = fileWriter.write
  const start = async (text = COMMENTED, env: Record<string, string> = {}, extra: Record<string, string> = {}) => {
    hub = await startTestHub(dialect, {files: {'.svc/settings.yaml': text, ...extra}, env})
    return hub
  }
  const file = () => readFileSync(join(hub!.home, '.svc/settings.yaml'), 'utf8')
  const put = (body: unknown) => hub!.request('PUT', '/api/v1/admin/server-config', {body})

  it('GET: mode workstation, layer0_editable true; echo writes nothing (file untouched)', async () => {
    await start()
    const got = (await hub!.request('GET', '/api/v1/admin/server-config')).body
    expect(got).toMatchObject({mode: 'workstation', layer0_editable: true})
    expect(got.server.hub.host).toBe('127.0.0.1')
    const r = await put(got)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({applied: [], file_keys: [], reload: {requires_restart: false}})
    expect(file()).toBe(COMMENTED)
  })

  it('a save touching both: Layer-1 to the database, Layer-0 to the file in place, comments and unknown keys kept', async () => {
    await start()
    const r = await put({quotas: {max_agents_per_project: 2}, server: {hub: {port: 9999, hub_name: 'Desk 2'}, storage: {region: ''}}})
    expect(r.status).toBe(200)
    expect(r.body.applied.sort()).toEqual(['hub', 'quotas'])
    expect(r.body.file_keys.sort()).toEqual(['server.hub.port', 'server.storage.region'])
    expect(r.body.reload).toEqual({requires_restart: true})
    const text = file()
    expect(text).toContain('# my settings')
    expect(text).toContain('schema_version: "1"   # keep me')
    expect(text).toContain('  # the hub block')
    expect(text).toContain('unknown_tool_key: {a: 1}  # unknown keys survive')
    expect(text).toMatch(/port: 9999/)
    // Explicit empty values are written as sent.
    expect(text).toMatch(/region: ""/)
    // Layer-1 keys never go to the file.
    expect(text).toContain('hub_name: Desk  # name')
    expect(text).toContain('max_agents_per_project: 7')
    expect(hub!.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(2)
    const got = (await hub!.request('GET', '/api/v1/admin/server-config')).body
    // The port takes effect at restart; this run keeps its --port value.
    expect(got.server.hub.hub_name).toBe('Desk 2')
  })

  it('null removes a key or block; omitted fields are kept; unchanged effective values are not written', async () => {
    await start()
    expect((await put({server: {log_level: null}})).body.file_keys).toEqual(['server.log_level'])
    expect(file()).not.toMatch(/log_level/)
    expect(file()).toContain('hub_name: Desk')
    const r = await put({server: {log_level: 'info'}})
    expect(r.body.file_keys).toEqual([])
  })

  it('log_level applies at once and needs no restart', async () => {
    await start()
    const r = await put({server: {log_level: 'warn'}})
    expect(r.body).toMatchObject({file_keys: ['server.log_level'], reload: {requires_restart: false}})
    expect(hub!.logger.level).toBe('warn')
  })

  it('rule 6: forced workstation fields have no effect and are reported as ignored, not written', async () => {
    await start()
    const r = await put({server: {hub: {host: '0.0.0.0'}, broker: {enabled: false}, storage: {provider: 's3'}, secrets: {backend: 'vault'}, auth: {dev_mode: false}}})
    expect(r.status).toBe(200)
    expect(r.body.file_keys).toEqual([])
    expect(r.body.ignored_keys.sort()).toEqual(['server.auth.dev_mode', 'server.broker.enabled', 'server.hub.host', 'server.secrets.backend', 'server.storage.provider'])
    expect(r.body.notices.join(' ')).toMatch(/ignored/)
    expect(file()).toBe(COMMENTED)
  })

  it('rule 4: creating a cors block without enabled also writes enabled with its current value (on)', async () => {
    await start()
    await put({server: {hub: {cors: {allowed_origins: ['https://a.example']}}}})
    const text = file()
    expect(text).toMatch(/cors:\n\s+enabled: true\n\s+allowed_origins:/)
    // The block exists now: a later edit inside it adds nothing.
    await put({server: {hub: {cors: {max_age: 5}}}})
    expect(file().match(/enabled:/g)).toHaveLength(1)
    // The broker's block follows the same rule; an `enabled` sent with the block is written as sent.
    await put({server: {broker: {cors: {allowed_origins: ['https://b.example']}}}})
    expect(file()).toMatch(/broker:\n\s+cors:\n\s+enabled: true\n\s+allowed_origins:/)
  })

  it('rule 5: null on the broker block keeps broker_id and broker_token; changing them is hub_owned_keys_rejected', async () => {
    await start('schema_version: "1"\nserver:\n  broker:\n    port: 9900\n    broker_id: b-1\n    broker_token: tok\n')
    const bad = await put({server: {broker: {broker_token: 'other'}}})
    expect(bad.status).toBe(422)
    expect(bad.body.error.code).toBe('hub_owned_keys_rejected')
    const r = await put({server: {broker: null}})
    expect(r.status).toBe(200)
    const text = file()
    expect(text).not.toMatch(/port: 9900/)
    expect(text).toMatch(/broker_id: b-1/)
    expect(text).toMatch(/broker_token: tok/)
  })

  it('unsaved_keys_rejected when a field would not load as sent; nothing saved (database included)', async () => {
    await start()
    const r = await put({quotas: {max_agents_per_project: 3}, server: {hub: {port: 'ninety'}}})
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('unsaved_keys_rejected')
    expect(r.body.error.details.keys).toEqual(['server.hub.port'])
    expect(file()).toBe(COMMENTED)
    expect(hub!.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(7)
  })

  it('validation_failed (inline per section), invalid_timezone and invalid_cloud_identity_mode refuse the whole save: neither the file nor the database changes', async () => {
    await start()
    const cases: Array<[unknown, number, string]> = [
      [{quotas: {max_agents_per_project: 'many'}, telemetry: {cloud: {protocol: 'smoke'}}, server: {hub: {port: 9995}}}, 400, 'validation_failed'],
      [{default_timezone: 'Local', server: {hub: {port: 9995}}}, 422, 'invalid_timezone'],
      [{default_cloud_identity_mode: 'Assign', server: {hub: {port: 9995}}}, 422, 'invalid_cloud_identity_mode'],
    ]
    for (const [body, status, code] of cases) {
      const r = await put(body)
      expect(r.status, JSON.stringify(body)).toBe(status)
      expect(r.body.error.code).toBe(code)
    }
    expect((await put(cases[0][0])).body.error.details.sections).toHaveProperty('quotas')
    expect(file()).toBe(COMMENTED)
    const sections = (await hub!.request('GET', '/api/v1/admin/server-config')).body.sections
    expect([sections.quotas.origin, sections.telemetry.origin, sections.agent_defaults.origin]).not.toContain('managed')
  })

  it('an empty body is 400 invalid_request and writes nothing', async () => {
    await start()
    for (const body of [{}, {revisions: {quotas: 1}}, {mode: 'workstation', sections: {}}]) {
      const r = await put(body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.code).toBe('invalid_request')
    }
    expect(file()).toBe(COMMENTED)
  })

  it('read-only keys (Default Agent Role, Default Maximum Agent Role, Default Harness Auth) are unpersisted_keys_rejected here too, never written to the file', async () => {
    await start()
    for (const body of [{default_agent_role: 'baseline'}, {default_max_agent_role: 'readonly'}, {default_harness_auth: 'api-key'}]) {
      const r = await put(body)
      expect(r.status, JSON.stringify(body)).toBe(422)
      expect(r.body.error.code).toBe('unpersisted_keys_rejected')
    }
    expect(file()).toBe(COMMENTED)
    expect((await hub!.request('GET', '/api/v1/admin/server-config')).body.default_agent_role).toBe('full')
  })

  it('a key set by the environment is reported as ignored and not written', async () => {
    await start(COMMENTED, {SVC_SERVER_LOGLEVEL: 'warn'})
    const r = await put({server: {log_level: 'debug'}})
    expect(r.status).toBe(200)
    expect(r.body.ignored_keys).toEqual(['server.log_level'])
    expect(r.body.file_keys).toEqual([])
    expect(file()).toBe(COMMENTED)
  })

  it('an invalid server.mode on a workstation save is 400 invalid_request', async () => {
    await start()
    const r = await put({server: {mode: 'Hosted'}})
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid_request')
    expect(file()).toBe(COMMENTED)
  })

  it('keys with no database home go to the file on a workstation; unknown keys are unclassified_keys_rejected', async () => {
    await start()
    expect((await put({active_profile: 'dev', workspace_path: '/w'})).body.file_keys.sort()).toEqual(['active_profile', 'workspace_path'])
    expect(file()).toMatch(/active_profile: dev/)
    const r = await put({brand_new: 1})
    expect(r.body.error.code).toBe('unclassified_keys_rejected')
  })

  it('yaml_alias_on_edited_path: an anchor or alias on an edited path refuses the save', async () => {
    await start('schema_version: "1"\nserver:\n  hub: &h\n    hub_name: x\ncopy_of_hub: *h\n')
    const r = await put({server: {hub: {port: 2}}})
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('yaml_alias_on_edited_path')
  })

  it('legacy_server_yaml: no server block in the file while server.yaml is in effect and the save would create it', async () => {
    await start('schema_version: "1"\n', {}, {'.svc/server.yaml': 'hub:\n  port: 9810\n'})
    const r = await put({server: {hub: {port: 9811}}})
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('legacy_server_yaml')
    expect(file()).toBe('schema_version: "1"\n')
  })

  it('a stale revision is 409 and changes nothing: neither the database nor the file', async () => {
    await start()
    const got = (await hub!.request('GET', '/api/v1/admin/server-config')).body
    expect((await put({quotas: {max_agents_per_project: 1}})).status).toBe(200)
    const r = await put({quotas: {max_agents_per_project: 5}, server: {hub: {port: 9998}}, revisions: {quotas: got.sections.quotas.revision}})
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('revision_conflict')
    expect(file()).toBe(COMMENTED)
    expect(hub!.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(1)
  })

  it('the final file write failing answers 500 listing the database sections that stayed saved', async () => {
    await start()
    fileWriter.write = () => {
      throw new Error('disk full')
    }
    const r = await put({quotas: {max_agents_per_project: 4}, server: {hub: {port: 9997}}})
    expect(r.status).toBe(500)
    expect(r.body.error.code).toBe('settings_file_write_failed')
    expect(r.body.error.details.applied).toEqual(['quotas'])
    expect(file()).toBe(COMMENTED)
    expect(hub!.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(4)
  })

  it('rule 7: a save waits for the settings-file lock another writer holds, then writes', async () => {
    await start()
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const inside = new Promise<void>((r) => (entered = r))
    const holder = withSettingsLock(join(hub!.home, '.svc/settings.yaml'), async () => {
      entered()
      await held
    })
    await inside
    const pending = put({server: {hub: {port: 9990}}, quotas: {max_agents_per_project: 6}})
    await new Promise((r) => setTimeout(r, 300))
    // Nothing written while the lock is held: not the file, not the database.
    expect(file()).toBe(COMMENTED)
    expect(hub!.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(7)
    release()
    await holder
    expect((await pending).status).toBe(200)
    expect(file()).toMatch(/port: 9990/)
  })

  it('no settings file yet: a save creates it with schema_version', async () => {
    hub = await startTestHub(dialect)
    mkdirSync(join(hub.home, '.svc'), {recursive: true})
    const r = await put({server: {hub: {port: 9996}}})
    expect(r.status).toBe(200)
    expect(file()).toMatch(/^schema_version: "1"\nserver:\n  hub:\n    port: 9996\n$/)
    void writeFileSync
  })
})
