import {afterAll, beforeAll, expect, it} from 'vitest'
import {PROJECT_SETTINGS} from '../../src/domain/project-settings/registry.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

// Hub defaults with values that must never appear in a response body.
const HUB_SECRETS = {default_model: 'hub-model-SENTINEL-1', default_timezone: 'Pacific/Chatham', default_max_turns: 424242}
const SETTINGS_FILE = `schema_version: "1"\ndefault_model: ${HUB_SECRETS.default_model}\ndefault_timezone: ${HUB_SECRETS.default_timezone}\ndefault_max_turns: ${HUB_SECRETS.default_max_turns}\n`
const KEYS = PROJECT_SETTINGS.map((d) => d.key).sort()

describeEachDialect('project settings and resolved project settings', (dialect) => {
  let hub: TestHub
  let member: TestUser
  let outsider: TestUser
  let projectId: string

  beforeAll(async () => {
    hub = await startTestHub(dialect, {files: {'.svc/settings.yaml': SETTINGS_FILE}})
    member = await createUser(hub, {email: 'member@example.com'})
    outsider = await createUser(hub, {email: 'outsider@example.com'})
    const p = await hub.request('POST', '/api/v1/projects/register', {body: {name: 'settings-demo'}})
    projectId = p.body.project.id
    await hub.request('POST', `/api/v1/projects/${projectId}/members`, {body: {userId: member.user.id, role: 'member'}})
  })
  afterAll(() => hub?.dispose())

  const resolved = (token?: string) => hub.request('GET', `/api/v1/projects/${projectId}/settings/resolved`, token ? {token} : {})

  it('lists exactly the registered settings when the project sets none, with hub defaults present or absent', async () => {
    const res = await resolved()
    expect(res.status).toBe(200)
    expect(Object.keys(res.body.settings).sort()).toEqual(KEYS)
    for (const [key, entry] of Object.entries(res.body.settings as Record<string, {projectSet: boolean; projectValue: unknown; hubDefault: string}>)) {
      expect(entry.projectSet).toBe(false)
      expect(entry.projectValue).toBeNull()
      const hubKey = PROJECT_SETTINGS.find((d) => d.key === key)!.hubKey
      expect(entry.hubDefault).toBe(hubKey in HUB_SECRETS ? 'present' : 'absent')
    }
    expect(Object.keys(res.body.project).sort()).toEqual(PROJECT_SETTINGS.map((d) => d.field).sort())
  })

  it('reports some and then all settings as set, with their raw values', async () => {
    let put = await hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {body: {defaultMaxTurns: 5, defaultModel: 'proj-model'}})
    expect(put.status).toBe(200)
    expect(put.body.settings).toMatchObject({defaultMaxTurns: 5, defaultModel: 'proj-model', defaultTimezone: null})
    let res = await resolved()
    expect(res.body.settings['svc/default-max-turns']).toEqual({projectSet: true, projectValue: '5', hubDefault: 'present'})
    expect(res.body.settings['svc/default-model']).toEqual({projectSet: true, projectValue: 'proj-model', hubDefault: 'present'})
    expect(res.body.settings['svc/default-template'].projectSet).toBe(false)

    const all = {
      defaultTemplate: 't',
      defaultHarnessConfig: 'shell',
      defaultMaxTurns: 9,
      defaultMaxModelCalls: 90,
      defaultMaxDuration: '45m',
      defaultResources: {cpu: '2', gpu: 1},
      defaultModel: 'm',
      defaultThinkingLevel: 'low',
      defaultAgentRole: 'baseline',
      defaultTimezone: 'Europe/Paris',
      defaultCloudIdentityMode: 'Block',
      defaultCloudIdentityServiceAccountId: 'sa-1',
      defaultRuntimeBroker: 'b-1',
    }
    put = await hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {body: all})
    expect(put.status).toBe(200)
    expect(put.body.settings).toEqual(all)
    res = await resolved()
    expect(Object.keys(res.body.settings).sort()).toEqual(KEYS)
    for (const entry of Object.values(res.body.settings as Record<string, {projectSet: boolean}>)) expect(entry.projectSet).toBe(true)
    expect(res.body.settings['svc/default-resources'].projectValue).toBe('{"cpu":"2","gpu":1}')
  })

  it('never returns a hub default value, from any settings route', async () => {
    for (const path of ['/settings/resolved', '/settings']) {
      const res = await hub.request('GET', `/api/v1/projects/${projectId}${path}`)
      const text = JSON.stringify(res.body)
      for (const v of Object.values(HUB_SECRETS)) expect(text).not.toContain(String(v))
    }
  })

  it('null clears a setting; the groves alias answers the same', async () => {
    const put = await hub.request('PUT', `/api/v1/groves/${projectId}/settings`, {body: {defaultModel: null}})
    expect(put.status).toBe(200)
    expect(put.body.settings.defaultModel).toBeNull()
    const res = await hub.request('GET', `/api/v1/groves/${projectId}/settings/resolved`)
    expect(res.body.settings['svc/default-model']).toEqual({projectSet: false, projectValue: null, hubDefault: 'present'})
  })

  it('refuses bad values with the failing fields, and changes nothing', async () => {
    const before = await hub.request('GET', `/api/v1/projects/${projectId}/settings`)
    for (const body of [{defaultMaxTurns: 0}, {defaultTimezone: 'Local'}, {defaultTimezone: 'Mars/Olympus'}, {defaultCloudIdentityMode: 'block'}, {defaultAgentRole: 'god'}, {defaultResources: {cpu: 2}}, {notASetting: 1}, {defaultMaxDuration: 'soon'}]) {
      const res = await hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {body: {defaultModel: 'would-change', ...body}})
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe('validation_error')
      expect(res.body.error.details.fields[0].path).toBe(Object.keys(body)[0])
    }
    expect((await hub.request('GET', `/api/v1/projects/${projectId}/settings`)).body).toEqual(before.body)
    const empty = await hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {body: {}})
    expect(empty.status).toBe(400)
  })

  it('a member without admin rights reads resolved settings but cannot change them; a non-member gets 404', async () => {
    expect((await resolved(member.token)).status).toBe(200)
    const put = await hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {token: member.token, body: {defaultModel: 'x'}})
    expect(put.status).toBe(403)
    const out = await resolved(outsider.token)
    expect(out.status).toBe(404)
    expect((await hub.request('GET', `/api/v1/projects/${projectId}`, {token: outsider.token})).status).toBe(404)
  })
})
