import http from 'node:http'
import WebSocket from 'ws'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {signRequest} from '../../src/api/broker-signing.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/** Sends a request with a raw body and answers {status, body}. */
function send(url: string, method: string, headers: Record<string, string>, body = ''): Promise<{status: number; body: any}> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {method, headers: {...(body && {'content-type': 'application/json'}), ...headers}}, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        let parsed: unknown = text
        try {
          parsed = JSON.parse(text)
        } catch {
          // text
        }
        resolve({status: res.statusCode ?? 0, body: parsed})
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * The co-located broker's local API (the Hub never uses it): /healthz open, everything else
 * signed with the broker's own ID and secret. The database is not involved: SQLite only.
 */
describe('brokers: the local API of the co-located broker', () => {
  let hub: LiveHub
  let base: string
  let brokerId: string
  let secret: string

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    base = hub.colocated!.localUrl!
    brokerId = hub.colocated!.broker.opts.brokerId
    secret = hub.colocated!.broker.opts.secret
  })
  afterAll(() => hub?.dispose())

  it('/healthz answers without credentials with the broker ID and its tunnel state', async () => {
    const r = await send(`${base}/healthz`, 'GET', {})
    expect(r.status).toBe(200)
    expect(r.body).toEqual({status: 'ok', brokerId, hubConnected: true, agents: 0})
  })

  it('POST /api/v1/agents needs a signature by this broker; signed, it starts a session; the attach WebSocket is signed too', async () => {
    const body = JSON.stringify({agentId: 'local-api-agent', name: 'local', projectId: 'p', harnessConfig: 'shell', env: {}})
    expect((await send(`${base}/api/v1/agents`, 'POST', {}, body)).status).toBe(401)
    expect((await send(`${base}/api/v1/agents`, 'POST', signRequest('another-broker', secret, 'POST', '/api/v1/agents', body), body)).status).toBe(401)
    expect((await send(`${base}/api/v1/agents`, 'POST', signRequest(brokerId, secret, 'POST', '/api/v1/agents', '{"other":1}'), body)).status).toBe(401)
    const headers = signRequest(brokerId, secret, 'POST', '/api/v1/agents', body)
    const ok = await send(`${base}/api/v1/agents`, 'POST', headers, body)
    expect(ok.status).toBe(201)
    expect(ok.body).toMatchObject({runtime: 'local', ref: 'svc-local-api-agent'})
    expect(hub.tmux('has-session', '-t', '=svc-local-api-agent').code).toBe(0)
    // The same signed request again is a replay.
    expect((await send(`${base}/api/v1/agents`, 'POST', headers, body)).status).toBe(401)

    const url = new URL('/api/v1/agents/local-api-agent/attach', base)
    url.protocol = 'ws:'
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url)
      ws.on('unexpected-response', (_q, res) => resolve(res.statusCode ?? 0))
      ws.on('open', () => resolve(101))
      ws.on('error', () => {})
    })
    expect(refused).toBe(401)
    const ws = new WebSocket(url, {headers: signRequest(brokerId, secret, 'GET', '/api/v1/agents/local-api-agent/attach', '')})
    let out = ''
    ws.on('message', (d) => (out += d.toString()))
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)))
    ws.send(Buffer.from('echo from-local-api\r'), {binary: true})
    await waitFor(() => out.includes('from-local-api'), 10_000, 'attach output')
    ws.close()
    await hub.colocated!.broker.request('agent.stop', {agentId: 'local-api-agent'})
    expect(hub.tmux('has-session', '-t', '=svc-local-api-agent').code).not.toBe(0)
  })

  it('concurrent signed requests are each checked against their own body', async () => {
    const results = await Promise.all(
      Array.from({length: 20}, (_, i) => {
        const body = JSON.stringify({agentId: `nobody-${i}`, name: `n${i}`, projectId: 'p', harnessConfig: 'no-such-harness', env: {}, pad: 'x'.repeat(i * 5000)})
        return send(`${base}/api/v1/agents`, 'POST', signRequest(brokerId, secret, 'POST', '/api/v1/agents', body), body)
      }),
    )
    // Each passes the signature check; the broker then refuses the unknown harness.
    expect(results.map((r) => r.status).filter((s) => s === 401)).toEqual([])
  })
})
