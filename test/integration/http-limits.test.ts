import net from 'node:net'
import WebSocket from 'ws'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {rawRequest} from '../helpers/raw-http.js'

/**
 * Issue 22 item 10: request and body timeouts, a connection cap, per-caller and per-agent caps on
 * attach and log sockets, and 64 KiB WebSocket messages on those sockets. Real loopback sockets;
 * the limits are given small so nothing waits long.
 */
describe('request timeouts and the connection cap', () => {
  let hub: TestHub
  let port: number
  beforeAll(async () => {
    hub = await startTestHub('sqlite', {limits: {headersTimeoutMs: 400, requestTimeoutMs: 400, idleTimeoutMs: 60_000, timeoutCheckMs: 100, maxConnections: 3}})
    await hub.app.listen({host: '127.0.0.1', port: 0})
    port = (hub.app.server.address() as {port: number}).port
  })
  afterAll(() => hub?.dispose())

  it('a stalled upload is cut with 408 request_timeout and creates nothing', async () => {
    const body = JSON.stringify({name: 'stalled-upload-project'})
    const res = await rawRequest(port, `POST /api/v1/projects/register HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${hub.devToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 10}\r\n\r\n${body}`)
    expect(res.closedByServer).toBe(true)
    expect(res.status).toBe(408)
    expect(JSON.parse(res.body).error.code).toBe('request_timeout')
    const list = await hub.request('GET', '/api/v1/projects')
    expect(list.body.projects.map((p: {name: string}) => p.name)).not.toContain('stalled-upload-project')
  })

  it('connections over the cap are closed on accept; a freed slot serves again', async () => {
    const open: net.Socket[] = []
    for (let i = 0; i < 3; i++) {
      const s = net.connect(port, '127.0.0.1')
      await new Promise((r) => s.once('connect', r))
      open.push(s)
    }
    // The server has accepted all three before the fourth arrives.
    await waitFor(() => new Promise<boolean>((r) => hub.app.server.getConnections((_e, n) => r(n === 3))), 5000, 'three connections')
    const fourth = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', {waitMs: 5000})
    expect(fourth).toMatchObject({closedByServer: true, empty: true})
    for (const s of open) s.destroy()
    await waitFor(() => new Promise<boolean>((r) => hub.app.server.getConnections((_e, n) => r(n === 0))), 5000, 'the connections to close')
    const again = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
    expect(again.status).toBe(200)
  })
})

describe('attach and log sockets: caps and message size', () => {
  let hub: LiveHub
  let agentId: string
  const sockets: WebSocket[] = []
  beforeAll(async () => {
    hub = await startLiveHub('sqlite', {limits: {attachPerCaller: 2, attachPerAgent: 5, logsPerCaller: 5, logsPerAgent: 2}})
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'capped', projectId: 'default', harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    agentId = r.body.agent.id
  })
  afterAll(async () => {
    for (const ws of sockets) ws.terminate()
    await hub?.dispose()
  })

  /** Opens a socket; resolves once it is open, refused or closed, with what it was told. */
  async function connect(path: string) {
    const url = new URL(path, hub.url)
    url.protocol = 'ws:'
    const ws = new WebSocket(url, {headers: {authorization: `Bearer ${hub.devToken}`}})
    sockets.push(ws)
    const state = {control: [] as any[], close: null as null | {code: number; reason: string}}
    ws.on('message', (data, isBinary) => {
      if (!isBinary) state.control.push(JSON.parse(data.toString()))
    })
    const closed = new Promise<{code: number; reason: string}>((r) => ws.on('close', (code, reason) => r((state.close = {code, reason: reason.toString()}))))
    const status = await new Promise<number>((resolve) => {
      ws.once('open', () => resolve(101))
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
      ws.once('error', () => resolve(0))
    })
    return {ws, state, status, closed}
  }
  const clients = () => hub.tmux('list-clients', '-t', `=svc-${agentId}`).stdout.split('\n').filter(Boolean).length

  it('a caller past its attach cap is refused on the socket (1008, quota_exceeded) and no terminal client is started', async () => {
    const a = await connect(`/api/v1/agents/${agentId}/attach`)
    const b = await connect(`/api/v1/agents/${agentId}/attach`)
    expect([a.status, b.status]).toEqual([101, 101])
    await waitFor(() => clients() === 2, 10_000, 'two tmux clients')
    const c = await connect(`/api/v1/agents/${agentId}/attach`)
    const told = await c.closed
    expect(told.code).toBe(1008)
    expect(told.reason).toMatch(/^quota_exceeded: too many open attach sockets/)
    expect(c.state.control).toEqual([expect.objectContaining({type: 'error', code: 'quota_exceeded'})])
    expect(clients()).toBe(2)
    // Closing one frees its slot.
    a.ws.close()
    await a.closed
    await waitFor(async () => {
      const d = await connect(`/api/v1/agents/${agentId}/attach`)
      if (d.status !== 101) return false
      await new Promise((r) => setTimeout(r, 200))
      return d.state.close === null
    }, 10_000, 'a freed attach slot')
    b.ws.close()
  })

  it('an agent past its live-log cap is refused on the socket, whoever asks', async () => {
    const a = await connect(`/api/v1/agents/${agentId}/logs`)
    const b = await connect(`/api/v1/agents/${agentId}/logs`)
    expect([a.status, b.status]).toEqual([101, 101])
    const c = await connect(`/api/v1/agents/${agentId}/logs`)
    const told = await c.closed
    expect(told.code).toBe(1008)
    expect(told.reason).toMatch(/^quota_exceeded: too many open logs sockets to this agent/)
    a.ws.close()
    b.ws.close()
  })

  it('a message over 64 KiB on an attach socket closes it with 1009; 64 KiB passes', async () => {
    const ok = await connect(`/api/v1/agents/${agentId}/attach`)
    expect(ok.status).toBe(101)
    ok.ws.send(Buffer.alloc(64 * 1024, 0x20), {binary: true})
    await new Promise((r) => setTimeout(r, 300))
    expect(ok.state.close).toBeNull()
    ok.ws.send(Buffer.alloc(65 * 1024, 0x20), {binary: true})
    const told = await ok.closed
    expect(told.code).toBe(1009)
  })

  it('the broker tunnel on the same server still takes larger messages', async () => {
    // A live log of more than 64 KiB comes back through the tunnel as one message.
    hub.tmux('send-keys', '-t', `=svc-${agentId}:`, '-l', `head -c 100000 /dev/zero | tr '\\0' x; echo\r`)
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${agentId}/logs`)).body.length > 70_000, 60_000, 'a large log')
    expect(hub.tunnels.isConnected(hub.brokerId!)).toBe(true)
  }, 90_000)
})
