import {afterEach, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'

const settings = (quotas: string) => ({'.svc/settings.yaml': `schema_version: "1"\nquotas:\n${quotas}`})

/** Agent quotas from the settings file: 429 quota_exceeded, enforce_broker_quotas, races. */
describeEachDialect('agents: quotas', (dialect) => {
  let hub: FakeBrokerHub | undefined
  afterEach(async () => {
    await hub?.dispose()
    hub = undefined
  })

  const create = (name: string, projectId = 'default') => hub!.request('POST', '/api/v1/agents', {body: {name, projectId}})

  it('max_agents_per_project: the second create is 429 quota_exceeded; another project is unaffected; stopping frees the slot', async () => {
    hub = await startFakeBrokerHub(dialect, {files: settings('  max_agents_per_project: 1\n')})
    expect((await create('one')).status).toBe(201)
    const two = await create('two')
    expect(two.status).toBe(429)
    expect(two.body.error).toMatchObject({code: 'quota_exceeded', details: {quota: 'max_agents_per_project', limit: 1}})
    expect(two.body.error.message).toMatch(/quotas\.max_agents_per_project/)
    const other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'other'}})).body.project.id
    expect((await create('two', other)).status).toBe(201)
    // The refused create left nothing behind.
    expect((await hub.request('GET', '/api/v1/agents?projectId=default')).body.agents.map((a: {name: string}) => a.name)).toEqual(['one'])
    const one = (await hub.request('GET', '/api/v1/projects/default/agents/one')).body.agent
    await hub.request('POST', `/api/v1/agents/${one.id}/stop`, {body: {}})
    expect((await create('two')).status).toBe(201)
    // Starting the stopped agent again would go over the cap: refused like a create.
    const start = await hub.request('POST', `/api/v1/agents/${one.id}/start`, {body: {}})
    expect(start.status).toBe(429)
    expect(start.body.error.code).toBe('quota_exceeded')
    expect((await hub.request('GET', `/api/v1/agents/${one.id}`)).body.agent.phase).toBe('stopped')
    // Restarting the running one stays within it.
    const second = (await hub.request('GET', '/api/v1/projects/default/agents/two')).body.agent
    expect((await hub.request('POST', `/api/v1/agents/${second.id}/restart`, {body: {}})).body.agent.phase).toBe('running')
  })

  it('max_agents_per_broker: the second create on the broker is 429', async () => {
    hub = await startFakeBrokerHub(dialect, {files: settings('  max_agents_per_broker: 1\n')})
    expect((await create('one')).status).toBe(201)
    const other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'other'}})).body.project.id
    const two = await create('two', other)
    expect(two.status).toBe(429)
    expect(two.body.error).toMatchObject({code: 'quota_exceeded', details: {quota: 'max_agents_per_broker', limit: 1}})
    expect((await hub.request('GET', `/api/v1/brokers/${hub.fake.brokerId}`)).body.broker.agents).toBe(1)
  })

  it('enforce_broker_quotas: false lets the broker go over its cap, but the project cap still holds', async () => {
    hub = await startFakeBrokerHub(dialect, {files: settings('  max_agents_per_broker: 1\n  max_agents_per_project: 2\n  enforce_broker_quotas: false\n')})
    expect((await create('one')).status).toBe(201)
    expect((await create('two')).status).toBe(201)
    expect((await hub.request('GET', `/api/v1/brokers/${hub.fake.brokerId}`)).body.broker.agents).toBe(2)
    const three = await create('three')
    expect(three.status).toBe(429)
    expect(three.body.error.details.quota).toBe('max_agents_per_project')
  })

  it('five creates at once against a cap of 2 make exactly 2 agents', async () => {
    hub = await startFakeBrokerHub(dialect, {files: settings('  max_agents_per_project: 2\n')})
    const results = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => create(`racer-${n}`)))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([201, 201, 429, 429, 429])
    expect((await hub.request('GET', '/api/v1/agents?projectId=default')).body.agents).toHaveLength(2)
    expect(hub.fake.requests('agent.start')).toHaveLength(2)
  })
})
