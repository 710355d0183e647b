import type {Dialect, TestHubOptions} from './hub.js'
import {FakeBroker, startLiveHub, waitFor, type LiveHub} from './live-hub.js'

export interface FakeBrokerHub extends LiveHub {
  fake: FakeBroker
  /** The agent token the Hub handed the broker when it dispatched `agentId`. */
  tokenOf(agentId: string): string
}

/**
 * A live Hub whose default broker is a hand-driven one (joined in two phases, then connected
 * through the signed tunnel), so agent rules are tested without tmux. It answers start, stop
 * and logs like a real broker.
 */
/**
 * Registers, joins and connects one more hand-driven broker (not the Hub's co-located one). It
 * answers start, stop and logs like a real broker; the caller closes it.
 */
export async function joinFakeBroker(hub: LiveHub, name: string, hello: {runtimes?: string[]} = {}): Promise<FakeBroker> {
  const r = await hub.request('POST', '/api/v1/brokers/register', {body: {name}})
  const j = await hub.request('POST', '/api/v1/brokers/join', {body: {joinToken: r.body.joinToken}, token: null})
  const fake = new FakeBroker(hub.url, j.body.brokerId, j.body.secret)
  fake.answer = (method, params) => {
    if (method === 'agent.start') return {runtime: 'local', ref: `svc-${params.agentId}`}
    if (method === 'agent.logs') return {log: Buffer.from(`output of ${params.agentId}\n`).toString('base64')}
    if (method === 'agent.stop') return {log: Buffer.from(`final output of ${params.agentId}\n`).toString('base64')}
    return {}
  }
  await fake.connect(hello)
  await waitFor(() => hub.tunnels.isConnected(fake.brokerId), 5000, `broker ${name} connected`)
  return fake
}

export async function startFakeBrokerHub(dialect: Dialect, opts: TestHubOptions = {}): Promise<FakeBrokerHub> {
  const hub = await startLiveHub(dialect, {...opts, broker: false})
  try {
    const fake = await joinFakeBroker(hub, 'fake')
    // The Hub's default broker, as its co-located one would be.
    hub.services.setColocatedBroker(fake.brokerId)
    const dispose = hub.dispose
    return Object.assign(hub, {
      fake,
      tokenOf: (agentId: string) => {
        const starts = fake.requests('agent.start').filter((m) => (m.params as {agentId: string}).agentId === agentId)
        if (!starts.length) throw new Error(`agent ${agentId} was never dispatched`)
        return (starts.at(-1)!.params as {env: Record<string, string>}).env.SVC_AUTH_TOKEN
      },
      dispose: async () => {
        await fake.close()
        await dispose()
      },
    })
  } catch (err) {
    await hub.dispose()
    throw err
  }
}
