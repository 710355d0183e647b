import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'

const SETTINGS_FILE = 'schema_version: "1"\ndefault_model: hub-model\ndefault_timezone: America/New_York\ndefault_max_turns: 50\n'

describeEachDialect('agent defaults: request, then project, then hub, then coded', (dialect) => {
  let hub: FakeBrokerHub
  let projectId: string
  let n = 0

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect, {files: {'.svc/settings.yaml': SETTINGS_FILE}})
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'defaults'}})).body.project.id
  })
  afterAll(() => hub?.dispose())

  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await hub.request('POST', '/api/v1/agents', {body: {name: `a${++n}`, projectId, ...extra}})
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.agent
  }
  const startEnv = (agentId: string) => {
    const start = hub.fake.requests('agent.start').find((m) => (m.params as {agentId: string}).agentId === agentId)!
    return (start.params as {env: Record<string, string>}).env
  }
  const setProject = (body: Record<string, unknown>) => hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {body})

  it('with nothing set in the project: hub defaults, then coded defaults', async () => {
    const a = await create()
    expect(a.appliedSettings.defaultModel).toEqual({value: 'hub-model', from: 'hub'})
    expect(a.appliedSettings.defaultMaxTurns).toEqual({value: 50, from: 'hub'})
    expect(a.appliedSettings.defaultTimezone).toEqual({value: 'America/New_York', from: 'hub'})
    expect(a.appliedSettings.defaultAgentRole).toEqual({value: 'full', from: 'coded'})
    expect(a.appliedSettings.defaultResources).toEqual({value: {cpu: '1', memory: '2Gi', disk: '10Gi', gpu: 0}, from: 'coded'})
    expect(a.appliedSettings.defaultThinkingLevel).toEqual({value: null, from: 'none'})
    expect(a.role).toBe('full')
    expect(a.harnessConfig).toBe('shell')
    expect(startEnv(a.id).TZ).toBe('America/New_York')
  })

  it('a project annotation wins over the hub default', async () => {
    expect((await setProject({defaultModel: 'proj-model', defaultTimezone: 'Europe/Paris', defaultAgentRole: 'baseline', defaultResources: {memory: '8Gi'}})).status).toBe(200)
    const a = await create()
    expect(a.appliedSettings.defaultModel).toEqual({value: 'proj-model', from: 'project'})
    expect(a.appliedSettings.defaultTimezone).toEqual({value: 'Europe/Paris', from: 'project'})
    expect(a.appliedSettings.defaultMaxTurns).toEqual({value: 50, from: 'hub'})
    expect(a.appliedSettings.defaultResources).toEqual({value: {cpu: '1', memory: '8Gi', disk: '10Gi', gpu: 0}, from: 'project'})
    expect(a.role).toBe('baseline')
    expect(startEnv(a.id).TZ).toBe('Europe/Paris')
  })

  it('the request wins over the project and the hub, and is validated by the same rules', async () => {
    const a = await create({model: 'req-model', timezone: 'Asia/Tokyo', role: 'readonly', maxTurns: 2, resources: {cpu: '3'}})
    expect(a.appliedSettings.defaultModel).toEqual({value: 'req-model', from: 'request'})
    expect(a.appliedSettings.defaultMaxTurns).toEqual({value: 2, from: 'request'})
    expect(a.appliedSettings.defaultResources.value).toEqual({cpu: '3', memory: '8Gi', disk: '10Gi', gpu: 0})
    expect(a.role).toBe('readonly')
    expect(startEnv(a.id).TZ).toBe('Asia/Tokyo')
    for (const bad of [{timezone: 'Local'}, {maxTurns: 0}, {role: 'root'}, {resources: {cpu: 1}}]) {
      const res = await hub.request('POST', '/api/v1/agents', {body: {name: `bad${++n}`, projectId, ...bad}})
      expect(res.status, JSON.stringify(bad)).toBe(400)
      expect(res.body.error.details.fields[0].path).toBe(Object.keys(bad)[0])
    }
  })

  it('clearing the project annotation falls back to the hub again', async () => {
    await setProject({defaultModel: null, defaultTimezone: null})
    const a = await create()
    expect(a.appliedSettings.defaultModel).toEqual({value: 'hub-model', from: 'hub'})
    expect(startEnv(a.id).TZ).toBe('America/New_York')
  })
})
