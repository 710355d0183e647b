import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {SessionUsage} from './harnesses/types.js'
import {deliver, deliverKept, keptReportsCourier, type PostReport} from './status-delivery.js'

const usage = (sessionId: string, modelCalls: number): SessionUsage => ({sessionId, inputTokens: 10 * modelCalls, outputTokens: modelCalls, modelCalls})

/**
 * A Hub stand-in on 127.0.0.1 that records each status report's body and answers `answer`;
 * `down()` closes it (connection refused), `up()` listens again on the same port.
 */
async function fakeHub() {
  const bodies: any[] = []
  const auth: string[] = []
  let answer = 200
  let hang = false
  let server: Server
  const listen = (port = 0) =>
    new Promise<number>((resolve) => {
      server = createServer((req, res) => {
        let body = ''
        req.on('data', (c) => (body += c))
        req.on('end', () => {
          bodies.push(JSON.parse(body))
          auth.push(`${req.url} ${req.headers.authorization}`)
          if (hang) return
          res.writeHead(answer, {'content-type': 'application/json'}).end('{}')
        })
      })
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
    })
  const port = await listen()
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    auth,
    answer: (status: number) => (answer = status),
    /** Takes each report and never answers. */
    hang: (on: boolean) => (hang = on),
    down: () => new Promise<void>((r) => {
      server.closeAllConnections()
      server.close(() => r())
    }),
    up: () => listen(port),
  }
}

describe('status delivery: reports the Hub did not take are kept, then delivered in order', () => {
  let dir: string
  let hub: Awaited<ReturnType<typeof fakeHub>>
  let env: NodeJS.ProcessEnv
  const kept = () => join(dir, '.svc', 'status-pending.json')
  const keptNow = () => JSON.parse(readFileSync(kept(), 'utf8'))

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-delivery-'))
    hub = await fakeHub()
    mkdirSync(join(dir, '.svc'))
    writeFileSync(join(dir, '.svc', 'agent-token'), 'svc_agt_test\n')
    env = {SVC_HUB_ENDPOINT: hub.url, SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN_FILE: join(dir, '.svc', 'agent-token')}
  })
  afterEach(async () => {
    await hub.down().catch(() => {})
    rmSync(dir, {recursive: true, force: true})
  })

  it('a delivered report keeps nothing', async () => {
    expect(await deliver(env, {activity: 'thinking', detail: ''})).toBe(200)
    expect(hub.bodies).toEqual([{activity: 'thinking', detail: '', heartbeat: true}])
    expect(hub.auth).toEqual(['/api/v1/agents/a1/status Bearer svc_agt_test'])
    expect(existsSync(kept())).toBe(false)
  })

  it('while the Hub is down reports fold into one kept file; the next report sends them first, the latest state last', async () => {
    await hub.down()
    expect(await deliver(env, {activity: 'idle', detail: '', turnEnded: true, usage: usage('s1', 2)})).toBeNull()
    expect(keptNow()).toEqual({activity: 'idle', detail: '', turns: 1, usage: [usage('s1', 2)]})
    await deliver(env, {activity: 'thinking', detail: ''})
    await deliver(env, {activity: 'executing', detail: 'Bash: ls'})
    await deliver(env, {activity: 'idle', detail: '', turnEnded: true, usage: usage('s1', 4)})
    // A second session (after /clear): the first's last usage is kept apart.
    await deliver(env, {activity: 'idle', turnEnded: true, usage: usage('s2', 1)})
    expect(keptNow()).toEqual({activity: 'idle', detail: '', turns: 3, usage: [usage('s1', 4), usage('s2', 1)]})

    await hub.up()
    expect(await deliver(env, {activity: 'thinking', detail: ''})).toBe(200)
    expect(hub.bodies).toEqual([
      {usage: usage('s1', 4), heartbeat: true},
      {turnEnded: true, heartbeat: true},
      {turnEnded: true, heartbeat: true},
      {activity: 'thinking', detail: '', turnEnded: true, usage: usage('s2', 1), heartbeat: true},
    ])
    expect(existsSync(kept())).toBe(false)
  })

  it('the broker delivers kept reports (nothing to send: no request); a 5xx keeps them, from the one refused on', async () => {
    await deliverKept(env)
    expect(hub.bodies).toEqual([])
    hub.answer(503)
    await deliver(env, {activity: 'idle', detail: '', turnEnded: true, usage: usage('s1', 1)})
    expect(keptNow()).toEqual({activity: 'idle', detail: '', turns: 1, usage: [usage('s1', 1)]})
    hub.answer(200)
    await deliverKept(env)
    expect(hub.bodies.at(-1)).toEqual({activity: 'idle', detail: '', turnEnded: true, usage: usage('s1', 1), heartbeat: true})
    expect(existsSync(kept())).toBe(false)
  })

  it('a report sent and never answered is kept without its turn (the Hub may have counted it)', async () => {
    hub.hang(true)
    expect(await deliver(env, {activity: 'idle', detail: '', turnEnded: true, usage: usage('s1', 2)})).toBe('unanswered')
    expect(hub.bodies).toHaveLength(1)
    expect(keptNow()).toEqual({activity: 'idle', detail: '', turns: 0, usage: [usage('s1', 2)]})
    hub.hang(false)
    await deliverKept(env)
    expect(hub.bodies.at(-1)).toEqual({activity: 'idle', detail: '', usage: usage('s1', 2), heartbeat: true})
    expect(existsSync(kept())).toBe(false)
  })

  it('a 429 is not taken: the report is kept with its turn and sent again', async () => {
    hub.answer(429)
    expect(await deliver(env, {activity: 'idle', turnEnded: true})).toBe(429)
    expect(keptNow()).toMatchObject({activity: 'idle', turns: 1})
    hub.answer(200)
    await deliverKept(env)
    expect(hub.bodies.at(-1)).toMatchObject({activity: 'idle', turnEnded: true})
    expect(existsSync(kept())).toBe(false)
  })

  it('a 4xx is final: the report is dropped, nothing kept', async () => {
    hub.answer(401)
    expect(await deliver(env, {activity: 'idle', turnEnded: true})).toBe(401)
    expect(existsSync(kept())).toBe(false)
  })

  it('without a token file (svc status run by hand) nothing is kept', async () => {
    await hub.down()
    const bare = {SVC_HUB_ENDPOINT: hub.url, SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN: 'svc_agt_x'}
    expect(await deliver(bare, {activity: 'idle'})).toBeNull()
    expect(existsSync(kept())).toBe(false)
  })

  it('a kept file that is not kept reports is dropped, not sent', async () => {
    writeFileSync(kept(), '{not json')
    await deliver(env, {activity: 'thinking'})
    expect(hub.bodies).toEqual([{activity: 'thinking', heartbeat: true}])
    expect(existsSync(kept())).toBe(false)
  })

  it("the broker's courier makes one pass at a time: a tick during a slow pass starts no second one", async () => {
    // Two agents with kept reports; the Hub is slow to answer the first.
    const envOf = (id: string) => ({...env, SVC_AGENT_ID: id, SVC_AUTH_TOKEN_FILE: join(dir, id, 'agent-token')})
    hub.answer(503)
    for (const id of ['a1', 'a2']) {
      mkdirSync(join(dir, id))
      await deliver(envOf(id), {activity: 'idle', detail: id})
    }
    let release = () => {}
    const posted: unknown[] = []
    const slow: PostReport = async (_e, r) => {
      posted.push(r)
      if (posted.length === 1) await new Promise<void>((resolve) => (release = resolve))
      return 200
    }
    const courier = keptReportsCourier(envOf, (_id, err) => {
      throw err
    }, slow)
    const first = courier(['a1', 'a2'])
    await courier(['a1', 'a2']) // returns at once: the first pass is still out
    expect(posted).toEqual([{activity: 'idle', detail: 'a1'}])
    release()
    await first
    expect(posted).toEqual([{activity: 'idle', detail: 'a1'}, {activity: 'idle', detail: 'a2'}])
  })
})
