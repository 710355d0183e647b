import {createHash} from 'node:crypto'
import {once} from 'node:events'
import net, {type AddressInfo} from 'node:net'
import type {Duplex} from 'node:stream'
import pino from 'pino'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {WebSocketServer} from 'ws'
import {registerLocalPorts} from '../../api/local-ports.js'
import {TunnelClient} from '../../broker/tunnel-client.js'
import {TunnelRegistry} from './tunnel-registry.js'

const BIG = Buffer.from(Array.from({length: 10 * 1024 * 1024}, (_, i) => (i * 7 + (i >> 12)) & 0xff))
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

async function waitFor(fn: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!fn()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Everything `d` yields until it ends, read slowly at first (so the sender meets its window). */
async function drain(d: Duplex): Promise<Buffer> {
  d.pause()
  await new Promise((r) => setTimeout(r, 200))
  const chunks: Buffer[] = []
  d.on('data', (c: Buffer) => chunks.push(c))
  d.resume()
  await once(d, 'close')
  return Buffer.concat(chunks)
}

/**
 * A preview's byte stream both ways a Hub can get it: through a real broker tunnel (TunnelClient
 * over a WebSocket on loopback, binary frames with flow control) for a broker in another process,
 * and, for a broker registered in this process (local-ports.ts), the broker's own connection.
 * The "agent's server" is a real TCP server that answers `go` with 10 MiB.
 */
describe('TunnelRegistry.openDuplex: through the tunnel, or the in-process broker\'s socket', () => {
  let registry: TunnelRegistry
  let wss: WebSocketServer
  let broker: TunnelClient
  let agentServer: net.Server
  let agentPort = 0
  const refusal = () => Object.assign(new Error('the agent does not listen on port 1'), {code: 'not_found'})
  const connectToAgent = async (params: unknown): Promise<net.Socket> => {
    if ((params as {port: number}).port !== agentPort) throw refusal()
    const s = net.connect(agentPort, '127.0.0.1')
    await once(s, 'connect')
    return s
  }

  beforeAll(async () => {
    agentServer = net.createServer((s) => s.once('data', () => s.end(BIG)))
    await new Promise<void>((r) => agentServer.listen(0, '127.0.0.1', r))
    agentPort = (agentServer.address() as AddressInfo).port
    registry = new TunnelRegistry()
    wss = new WebSocketServer({port: 0, host: '127.0.0.1'})
    const connected = new Promise<void>((resolve) => wss.on('connection', (ws) => (registry.add('b1', ws), resolve())))
    await once(wss, 'listening')
    broker = new TunnelClient(`http://127.0.0.1:${(wss.address() as AddressInfo).port}`, 'b1', 'secret', {
      hello: () => ({version: '1', capabilities: ['ports'], runtimes: [], agents: []}),
      request: async () => null,
      openStream: async () => {},
      openDuplex: async (_method, params, duplex) => {
        const s = await connectToAgent(params)
        s.pipe(duplex).pipe(s)
      },
    }, pino({level: 'silent'}))
    broker.start()
    await connected
  })
  afterAll(async () => {
    broker?.stop()
    registry?.closeAll()
    wss?.close()
    agentServer?.close()
  })

  it('through the tunnel: 10 MiB arrive whole to a slow reader; a refusal keeps its code', async () => {
    const d = await registry.openDuplex('b1', 'agent.port', {port: agentPort})
    d.write('go')
    expect(sha(await drain(d))).toBe(sha(BIG))
    await expect(registry.openDuplex('b1', 'agent.port', {port: 1})).rejects.toMatchObject({code: 'broker_error', details: {brokerCode: 'not_found'}})
  })

  it('a broker in this process that takes too long to open is broker_timeout, and the connection made after it is closed', async () => {
    let release: () => void = () => {}
    const accepted: net.Socket[] = []
    const server = net.createServer((s) => accepted.push(s))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const unregister = registerLocalPorts('b1', async () => {
      await new Promise<void>((r) => (release = r))
      const s = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
      await once(s, 'connect')
      return s
    })
    try {
      await expect(registry.openDuplex('b1', 'agent.port', {port: agentPort}, 50)).rejects.toMatchObject({code: 'broker_timeout', status: 504})
      release()
      await waitFor(() => accepted.length > 0)
      await waitFor(() => accepted[0].readableEnded || accepted[0].destroyed)
    } finally {
      unregister()
      for (const s of accepted) s.destroy()
      server.close()
    }
  })

  it('a broker in this process: its own socket, refusals as through the tunnel; gone once it unregisters', async () => {
    const opened: unknown[] = []
    const unregister = registerLocalPorts('b1', async (_method, params) => (opened.push(params), connectToAgent(params)))
    try {
      const d = await registry.openDuplex('b1', 'agent.port', {port: agentPort})
      expect(d).toBeInstanceOf(net.Socket)
      d.write('go')
      expect(sha(await drain(d))).toBe(sha(BIG))
      await expect(registry.openDuplex('b1', 'agent.port', {port: 1})).rejects.toMatchObject({code: 'broker_error', details: {brokerCode: 'not_found'}})
    } finally {
      unregister()
    }
    // Only while that broker's tunnel is connected here.
    const away = registerLocalPorts('b2', connectToAgent)
    try {
      await expect((async () => registry.openDuplex('b2', 'agent.port', {port: agentPort}))()).rejects.toMatchObject({code: 'broker_unavailable'})
    } finally {
      away()
    }
    expect(opened).toEqual([{port: agentPort}, {port: 1}])
    const d = await registry.openDuplex('b1', 'agent.port', {port: agentPort})
    expect(d).not.toBeInstanceOf(net.Socket)
    d.destroy()
  })
})
