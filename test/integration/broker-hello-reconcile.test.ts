import pino from 'pino'
import {afterAll, beforeAll, expect, it} from 'vitest'
import type {BrokersService} from '../../src/domain/brokers/brokers-service.js'
import {createBrokerEvents} from '../../src/domain/brokers/broker-events.js'
import {newId} from '../../src/domain/shared/secrets.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'

/**
 * A broker's hello lists the sessions it runs at that moment, and the Hub marks its agents that
 * are `running` but not listed as lost (stopped). A broker counts as connected as soon as its
 * hello arrives, so an agent can be started on it while the hello is still being handled (a
 * create right after a workstation Hub's start): that agent is not in the list and must not be
 * marked lost. Here the agent turns `running` while the broker is being marked online; it stays
 * running, while an agent that was running before the hello and is not listed is stopped.
 */
describeEachDialect('broker hello: agents started meanwhile are not lost', (dialect) => {
  let hub: TestHub
  beforeAll(async () => {
    hub = await startTestHub(dialect)
  })
  afterAll(async () => {
    await hub?.dispose()
  })

  it('judges the hello against the agents the Hub had when it arrived', async () => {
    const {services, store} = hub
    const broker = (await hub.request('POST', '/api/v1/brokers/register', {body: {name: 'hello-race'}})).body
    const brokerId = broker.brokerId ?? broker.broker?.id
    expect(typeof brokerId).toBe('string')
    const project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'hello-race'}})).body.project.id
    const at = new Date().toISOString()
    const insert = async (name: string) => {
      const id = newId()
      await store.agents.insert({id, name, projectId: project, brokerId, phase: 'running', activity: null, detail: '', harnessConfig: 'shell', template: null, task: null, role: 'baseline', runtime: 'local', runtimeRef: `svc-${name}`, config: {}, error: null, createdBy: {kind: 'user', id: 'dev-user'}, createdAt: at, updatedAt: at})
      return id
    }
    const lost = await insert('lost-before-hello')

    // Marking the broker online waits until an agent has been started on it meanwhile.
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const marking = new Promise<void>((r) => (entered = r))
    const brokers = Object.assign(Object.create(services.brokers) as BrokersService, {
      connected: async (...args: Parameters<BrokersService['connected']>) => {
        entered()
        await gate
        return services.brokers.connected(...args)
      },
    })
    let reconciled = false
    const agents = Object.assign(Object.create(services.agents) as typeof services.agents, {
      reconcile: async (...args: Parameters<typeof services.agents.reconcile>) => {
        await services.agents.reconcile(...args)
        reconciled = true
      },
    })
    const events = createBrokerEvents({brokers, agents, logger: pino({level: 'silent'})})
    events.onEvent(brokerId, 'hello', {capabilities: ['agents'], runtimes: ['local'], version: 'test', agents: [], workspaces: []})
    await marking
    const startedMeanwhile = await insert('started-meanwhile')
    release()
    await waitFor(() => reconciled, 10_000, 'the hello reconciled')

    expect((await store.agents.get(startedMeanwhile))?.phase).toBe('running')
    const gone = await store.agents.get(lost)
    expect([gone?.phase, gone?.error]).toEqual(['stopped', 'the broker no longer runs this agent'])
  })
})
