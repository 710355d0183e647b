import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {hubEndpointEnv, hubEndpoints, replicaEnv} from './hub-post.js'
import {deliver, postReport} from './status-delivery.js'

/** A replica stand-in: records report bodies, answers `status`. */
async function replica(status = 200): Promise<{url: string; bodies: any[]; close(): Promise<void>}> {
  const bodies: any[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      bodies.push(JSON.parse(body))
      res.writeHead(status, {'content-type': 'application/json'}).end('{}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, close: () => new Promise((r) => server.close(() => r()))}
}

/** A URL where nothing listens (connection refused): a replica that is gone. */
async function goneUrl(): Promise<string> {
  const r = await replica()
  await r.close()
  return r.url
}

const dirs: string[] = []
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function agentEnv(endpoints: Record<string, string>): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'svc-failover-'))
  dirs.push(home)
  writeFileSync(join(home, 'agent-token'), 'svc_agent_token\n')
  return {...endpoints, SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN_FILE: join(home, 'agent-token')}
}

it('the endpoint list: SVC_HUB_ENDPOINT first, then SVC_HUB_ENDPOINTS without repeats; every replica is an *_ENDPOINT for the egress plan', () => {
  expect(hubEndpoints({SVC_HUB_ENDPOINT: 'http://b:1', SVC_HUB_ENDPOINTS: 'http://a:1, http://b:1,http://c:1'})).toEqual(['http://b:1', 'http://a:1', 'http://c:1'])
  expect(hubEndpoints({SVC_HUB_ENDPOINT: 'http://a:1'})).toEqual(['http://a:1'])
  expect(hubEndpointEnv('http://a:1', ['http://a:1'])).toEqual({SVC_HUB_ENDPOINT: 'http://a:1'})
  expect(hubEndpointEnv('http://b:1', ['http://a:1', 'http://b:1'])).toEqual({SVC_HUB_ENDPOINT: 'http://b:1', SVC_HUB_ENDPOINTS: 'http://a:1,http://b:1'})
  expect(replicaEnv(['http://a:1'])).toEqual({})
  expect(replicaEnv(['http://a:1', 'http://b:1'])).toEqual({SVC_HUB_ENDPOINTS: 'http://a:1,http://b:1', SVC_HUB_REPLICA0_ENDPOINT: 'http://a:1', SVC_HUB_REPLICA1_ENDPOINT: 'http://b:1'})
})

it('a report its first replica cannot take (gone, or a proxy answering 502) goes to the next', async () => {
  const live = await replica()
  const proxy = await replica(502)
  closers.push(live.close, proxy.close)
  const env = agentEnv({SVC_HUB_ENDPOINT: await goneUrl(), SVC_HUB_ENDPOINTS: [proxy.url, live.url].join(',')})
  expect(await postReport(env, {activity: 'thinking', detail: 'x'})).toBe(200)
  expect(proxy.bodies).toHaveLength(1)
  expect(live.bodies).toEqual([{activity: 'thinking', detail: 'x', heartbeat: true}])
})

it('a refusal (4xx) is final: the next replica is not asked', async () => {
  const refusing = await replica(409)
  const other = await replica()
  closers.push(refusing.close, other.close)
  expect(await postReport(agentEnv({SVC_HUB_ENDPOINT: refusing.url, SVC_HUB_ENDPOINTS: other.url}), {activity: 'idle'})).toBe(409)
  expect(other.bodies).toHaveLength(0)
})

it('with every replica gone the report (a phase too, as `svc status` sends) is kept, and delivered with the next one', async () => {
  const env = agentEnv({SVC_HUB_ENDPOINT: await goneUrl(), SVC_HUB_ENDPOINTS: await goneUrl()})
  expect(await deliver(env, {phase: 'running', activity: 'waiting_for_input', detail: 'asks'})).toBeNull()
  const kept = JSON.parse(readFileSync(join(env.SVC_AUTH_TOKEN_FILE!, '..', 'status-pending.json'), 'utf8'))
  expect(kept).toMatchObject({phase: 'running', activity: 'waiting_for_input', detail: 'asks'})
  const back = await replica()
  closers.push(back.close)
  expect(await deliver({...env, SVC_HUB_ENDPOINTS: back.url}, {detail: 'later'})).toBe(200)
  expect(back.bodies).toEqual([{phase: 'running', activity: 'waiting_for_input', detail: 'later', heartbeat: true}])
})

it('a report sent and unanswered (the connection closed on it) goes to the next replica without its turn', async () => {
  const {createServer: tcp} = await import('node:net')
  const dropping = tcp((s) => s.once('data', () => s.destroy()))
  await new Promise<void>((r) => dropping.listen(0, '127.0.0.1', r))
  closers.push(() => new Promise((r) => dropping.close(() => r())))
  const live = await replica()
  closers.push(live.close)
  const env = agentEnv({SVC_HUB_ENDPOINT: `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`, SVC_HUB_ENDPOINTS: live.url})
  expect(await postReport(env, {activity: 'idle', turnEnded: true})).toBe(200)
  expect(live.bodies).toEqual([{activity: 'idle', heartbeat: true}])
})
