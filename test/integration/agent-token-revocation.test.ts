import {randomBytes} from 'node:crypto'
import pino from 'pino'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {AGENT_TOKENS_CHANNEL, createAgentTokens} from '../../src/domain/agents/agent-tokens.js'
import {systemClock} from '../../src/domain/shared/clock.js'
import type {Store} from '../../src/store/store.js'
import {joinFakeBroker} from '../helpers/fake-broker-hub.js'
import {describeEachDialect, type TestHub} from '../helpers/hub.js'
import {waitFor, type FakeBroker, type LiveHub} from '../helpers/live-hub.js'
import {createHubDb, startHubOn, type HubDb} from '../helpers/restart-hub.js'

/**
 * Agent tokens are cached per replica (agent-tokens.ts); a revocation is announced over the
 * store's events (PostgreSQL LISTEN/NOTIFY; SQLite in process) and drops the agent's tokens from
 * every replica's cache. Two Hubs on one database: the agent's broker is connected to A, its
 * reports go to B; a restart on A revokes the token B has cached, and B refuses the next report
 * with it, writing nothing. (A revocation nobody announced is covered in agents-api: within the
 * cache's TTL.)
 */
describeEachDialect('agent tokens: a revocation reaches every replica', (dialect) => {
  let db: HubDb
  let a: TestHub
  let b: TestHub
  let fake: FakeBroker
  let projectId: string

  beforeAll(async () => {
    db = await createHubDb(dialect)
    // Replicas share their secrets key (broker secrets are sealed with it).
    const env = {SVC_SECRETS_KEY: randomBytes(32).toString('hex')}
    a = await startHubOn(db, {env})
    b = await startHubOn(db, {env})
    await a.app.listen({host: '127.0.0.1', port: 0})
    const url = `http://127.0.0.1:${(a.app.server.address() as {port: number}).port}`
    fake = await joinFakeBroker(Object.assign(a, {url}) as unknown as LiveHub, 'revocations')
    projectId = (await a.request('POST', '/api/v1/projects/register', {body: {name: 'revocations'}})).body.project.id
  })
  afterAll(async () => {
    await fake?.close()
    await a?.dispose().catch(() => {})
    await b?.dispose()
    await db?.drop()
  })

  const tokensOf = (agentId: string) => fake.requests('agent.start').filter((m) => (m.params as {agentId: string}).agentId === agentId).map((m) => (m.params as {env: Record<string, string>}).env.SVC_AUTH_TOKEN)
  const report = (hub: TestHub, agentId: string, token: string, detail: string) => hub.request('POST', `/api/v1/agents/${agentId}/status`, {token, body: {activity: 'executing', detail}})

  it('a token revoked on one replica (a restart there) is refused at the next report on the other, which writes nothing', async () => {
    const created = await a.request('POST', '/api/v1/agents', {body: {projectId, name: 'revoked-on-a', harnessConfig: 'shell', brokerId: fake.brokerId}})
    expect(created.status).toBe(201)
    const id = created.body.agent.id as string
    const [old] = tokensOf(id)
    // B resolves the token once and then answers from its cache.
    expect((await report(b, id, old, 'before 1')).status).toBe(200)
    expect((await report(b, id, old, 'before 2')).status).toBe(200)
    expect((await b.request('GET', '/api/v1/auth/me', {token: old})).status).toBe(200)

    const restarted = await a.request('POST', `/api/v1/agents/${id}/restart`, {body: {}})
    expect(restarted.body.agent.phase).toBe('running')
    const fresh = tokensOf(id).at(-1)!
    expect(fresh).not.toBe(old)
    // The announcement reaches B within a notification's latency (PostgreSQL delivers it
    // after the commit, asynchronously); B's cache entry would otherwise live 15 s. A read-only
    // request tells when.
    await waitFor(async () => (await b.request('GET', '/api/v1/auth/me', {token: old})).status === 401, 2000, 'B dropping the revoked token')

    const from = await b.store.agentEvents.latestSeq()
    const refused = await report(b, id, old, 'after revocation')
    expect([refused.status, refused.body.error.code]).toEqual([401, 'unauthorized'])
    expect((await b.store.agents.get(id))?.detail).not.toBe('after revocation')
    expect((await b.store.agentEvents.since(from)).filter((e) => e.agentId === id)).toEqual([])
    expect((await b.request('GET', `/api/v1/agents/${id}`)).body.agent.detail).not.toBe('after revocation')
    // Every route of B refuses it, and the fresh token works there.
    expect((await b.request('GET', `/api/v1/agents/${id}`, {token: old})).status).toBe(401)
    expect((await report(b, id, fresh, 'fresh token')).status).toBe(200)
    expect((await b.store.agents.get(id))?.detail).toBe('fresh token')
  })

  it('a resolution that read the token before a revocation arrived does not cache it', async () => {
    const created = await a.request('POST', '/api/v1/agents', {body: {projectId, name: 'in-flight', harnessConfig: 'shell', brokerId: fake.brokerId}})
    const id = created.body.agent.id as string
    const [token] = tokensOf(id)
    // A resolver on B's store whose second read (the agent row) waits until the test lets it go.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const reading = new Promise<void>((r) => (entered = r))
    const agents = Object.create(b.store.agents) as Store['agents']
    agents.get = async (agentId: string) => {
      entered()
      await held
      return b.store.agents.get(agentId)
    }
    const store = Object.assign(Object.create(b.store) as Store, {agents})
    const tokens = createAgentTokens({store, clock: systemClock, logger: pino({level: 'silent'}), config: b.config})
    try {
      const heard = new Promise<void>((resolve) => {
        const off = b.store.events.subscribe(AGENT_TOKENS_CHANNEL, (p) => {
          if (p.agentId !== id) return
          off()
          resolve()
        })
      })
      const resolving = tokens.resolve(token)
      // The token row is read (still valid) before the revocation commits on A.
      await reading
      expect((await a.request('POST', `/api/v1/agents/${id}/stop`)).body.agent.phase).toBe('stopped')
      await heard
      release()
      // Begun before the revocation: answered, but not kept for the next request.
      expect((await resolving)?.principal).toMatchObject({kind: 'agent', id})
      expect(tokens.cached(token)).toBeNull()
      await expect(tokens.resolve(token)).rejects.toMatchObject({code: 'unauthorized'})
    } finally {
      release()
      tokens.close()
    }
  })
})
