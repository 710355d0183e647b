import type {AddressInfo} from 'node:net'
import pino from 'pino'
import {afterEach, expect, it} from 'vitest'
import {WebSocketServer} from 'ws'
import {TunnelClient} from './tunnel-client.js'

/** A replica stand-in: accepts the tunnel upgrade and records each hello it reads. */
async function replica() {
  const hellos: unknown[] = []
  const wss = new WebSocketServer({host: '127.0.0.1', port: 0})
  wss.on('connection', (ws) => ws.on('message', (raw) => hellos.push(JSON.parse(raw.toString()))))
  await new Promise<void>((r) => wss.once('listening', () => r()))
  const url = `http://127.0.0.1:${(wss.address() as AddressInfo).port}`
  return {
    url,
    hellos,
    /** Gone at once, as a killed process: every connection reset, the port closed. */
    kill: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate()
        wss.close(() => r())
      }),
  }
}

const waitFor = async (fn: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const clients: TunnelClient[] = []
const kills: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.stop()
  for (const k of kills.splice(0)) await k().catch(() => {})
})

function client(urls: string[]) {
  const c = new TunnelClient(urls, 'b1', 'svc_brk_x', {hello: () => ({version: '1'}), request: async () => null, openStream: async () => {}}, pino({level: 'silent'}))
  clients.push(c)
  c.start()
  return c
}

it('holds one tunnel, to the first URL that answers; when that replica goes away it connects to the next', async () => {
  const [a, b] = [await replica(), await replica()]
  kills.push(b.kill)
  const c = client([a.url, b.url])
  await waitFor(() => a.hellos.length === 1, 'hello on A')
  expect(c.hubUrl).toBe(a.url)
  expect(b.hellos).toHaveLength(0)
  await a.kill()
  await waitFor(() => b.hellos.length === 1 && c.connected, 'hello on B')
  expect(c.hubUrl).toBe(b.url)
})

it('skips a first URL that does not answer', async () => {
  const gone = await replica()
  await gone.kill()
  const b = await replica()
  kills.push(b.kill)
  const c = client([gone.url, b.url])
  await waitFor(() => b.hellos.length === 1 && c.connected, 'hello on the second URL')
  expect(c.hubUrl).toBe(b.url)
})
