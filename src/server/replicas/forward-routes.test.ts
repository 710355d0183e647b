import {randomBytes} from 'node:crypto'
import {once} from 'node:events'
import net, {type AddressInfo} from 'node:net'
import websocket from '@fastify/websocket'
import Fastify, {type FastifyInstance} from 'fastify'
import pino from 'pino'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import WebSocket, {WebSocketServer} from 'ws'
import {registerLocalPorts} from '../../api/local-ports.js'
import {TunnelClient} from '../../broker/tunnel-client.js'
import {TunnelRegistry} from '../tunnel/tunnel-registry.js'
import {FORWARD_DUPLEX_PATH} from './forward-client.js'
import {forwardRoutes} from './forward-routes.js'
import {replicaVerifier, signForReplica} from './replica-auth.js'

async function waitFor(fn: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!fn()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * The holding replica's duplex route (an agent's port for a preview through another replica)
 * opens the port before the WebSocket upgrade completes: a port opened for an upgrade that
 * never completes must be closed, not left open to the agent's server.
 */
describe('forward routes: the byte stream of an upgrade that never completes is closed', () => {
  const key = randomBytes(32)
  let registry: TunnelRegistry
  let wss: WebSocketServer
  let broker: TunnelClient
  let holder: FastifyInstance
  let holderPort = 0
  let agentServer: net.Server
  /** The agent's side of each connection opened to its port, and the Hub's. */
  const agentSide: net.Socket[] = []
  const hubSide: net.Socket[] = []
  /** The agent's server keeps its half open after the Hub's side ends (as a hostile one may). */
  let holdHalfOpen = false
  /** Each open waits for this before connecting (a broker slow to open the port). */
  let gate: Promise<void> = Promise.resolve()
  let unregister = () => {}

  const op = Buffer.from(JSON.stringify({method: 'agent.port', params: {port: 1}})).toString('base64url')
  const path = `${FORWARD_DUPLEX_PATH.replace(':brokerId', 'b1')}?op=${op}`
  /** Opens asked of the broker so far. */
  let opens = 0

  /** An upgrade request written on a raw socket, so the test decides when the client leaves. */
  async function rawUpgrade(wsKey: string): Promise<net.Socket> {
    const s = net.connect(holderPort, '127.0.0.1')
    await once(s, 'connect')
    const headers = {...signForReplica(key, 'other', 'holder', 'GET', path), connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': wsKey}
    const lines = [`GET ${path} HTTP/1.1`, `host: 127.0.0.1:${holderPort}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
    s.write(`${lines.join('\r\n')}\r\n\r\n`)
    s.on('error', () => {})
    return s
  }

  beforeAll(async () => {
    agentServer = net.createServer({allowHalfOpen: true}, (s) => {
      agentSide.push(s)
      s.on('data', (d) => s.write(d))
      s.on('end', () => holdHalfOpen || s.end())
    })
    await new Promise<void>((r) => agentServer.listen(0, '127.0.0.1', r))
    const agentPort = (agentServer.address() as AddressInfo).port
    registry = new TunnelRegistry()
    wss = new WebSocketServer({port: 0, host: '127.0.0.1'})
    const connected = new Promise<void>((resolve) => wss.on('connection', (ws) => (registry.add('b1', ws), resolve())))
    await once(wss, 'listening')
    broker = new TunnelClient(
      `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
      'b1',
      'secret',
      {hello: () => ({version: '1', capabilities: ['ports'], runtimes: [], agents: []}), request: async () => null, openStream: async () => {}},
      pino({level: 'silent'}),
    )
    broker.start()
    await connected
    // The broker in this process connects to the agent's port (local-ports.ts), after the gate.
    unregister = registerLocalPorts('b1', async () => {
      opens++
      await gate
      const s = net.connect(agentPort, '127.0.0.1')
      await once(s, 'connect')
      hubSide.push(s)
      return s
    })
    holder = Fastify()
    await holder.register(websocket)
    await holder.register(forwardRoutes({tunnels: registry, verify: replicaVerifier(() => key, () => 'holder')}))
    await holder.listen({port: 0, host: '127.0.0.1'})
    holderPort = (holder.server.address() as AddressInfo).port
  })

  afterAll(async () => {
    unregister()
    await holder?.close()
    broker?.stop()
    registry?.closeAll()
    wss?.close()
    for (const s of agentSide) s.destroy()
    agentServer?.close()
  })

  it('relays a completed upgrade both ways', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${holderPort}${path}`, {headers: signForReplica(key, 'other', 'holder', 'GET', path)})
    await once(ws, 'open')
    ws.send(Buffer.from('ping'))
    const [echo] = (await once(ws, 'message')) as [Buffer]
    expect(echo.toString()).toBe('ping')
    const side = agentSide.at(-1)!
    ws.close()
    await waitFor(() => side.destroyed || side.readableEnded)
  })

  it("the client closes the WebSocket while the agent's server holds its half open: the port connection is closed", async () => {
    holdHalfOpen = true
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${holderPort}${path}`, {headers: signForReplica(key, 'other', 'holder', 'GET', path)})
      await once(ws, 'open')
      ws.send(Buffer.from('ping'))
      await once(ws, 'message')
      const side = hubSide.at(-1)!
      ws.close()
      await waitFor(() => side.destroyed)
    } finally {
      holdHalfOpen = false
    }
  })

  it('the client leaves while the port is being opened: the port connection is closed once it opens', async () => {
    let open: () => void = () => {}
    gate = new Promise<void>((r) => (open = r))
    const [before, opened] = [agentSide.length, opens]
    const client = await rawUpgrade(randomBytes(16).toString('base64'))
    // The request reached the preHandler (the broker is opening the port); then the client goes.
    await waitFor(() => opens > opened)
    client.destroy()
    await once(client, 'close')
    open()
    await waitFor(() => agentSide.length > before)
    const side = agentSide.at(-1)!
    await waitFor(() => side.destroyed || side.readableEnded)
    gate = Promise.resolve()
  })

  it('ws refuses the handshake after the port was opened (a malformed key): the port connection is closed', async () => {
    const before = agentSide.length
    const client = await rawUpgrade('not a websocket key')
    const answer = await new Promise<string>((resolve) => {
      let text = ''
      client.on('data', (d: Buffer) => (text += d.toString()))
      client.on('close', () => resolve(text))
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400/)
    await waitFor(() => agentSide.length > before)
    const side = agentSide.at(-1)!
    await waitFor(() => side.destroyed || side.readableEnded)
  })
})
