import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {joinFakeBroker} from '../helpers/fake-broker-hub.js'
import type {TestHub} from '../helpers/hub.js'
import {waitFor, type FakeBroker, type LiveHub} from '../helpers/live-hub.js'
import {createMigratedPgDatabase, pgAvailable, pgUrl} from '../helpers/pg.js'
import {startHubOn, type HubDb} from '../helpers/restart-hub.js'

const pgOk = await pgAvailable()

/**
 * A replica's agent-token cache is kept current by revocations announced over LISTEN/NOTIFY
 * (agent-tokens.ts); what is announced while its listening connection is down never arrives. So
 * the cache is dropped when that connection drops and once it listens again (StoreEvents.onGap):
 * a token revoked meanwhile is refused at the next request, not only when its cache entry ages
 * out (15 s). The Hub gets a database of its own, so only its listener is cut. PostgreSQL only:
 * SQLite's delivery is in process and has no gap.
 */
describe.skipIf(!pgOk)(`agent tokens: a gap in LISTEN drops the cache [postgres]${pgOk ? '' : ' (SKIPPED: no PostgreSQL)'}`, () => {
  let db: HubDb
  let dbName: string
  let hub: TestHub
  let fake: FakeBroker
  let admin: pg.Client

  beforeAll(async () => {
    const made = await createMigratedPgDatabase()
    db = {dialect: 'postgres', driver: 'postgres', ...made}
    dbName = new URL(made.url).pathname.slice(1)
    hub = await startHubOn(db)
    await hub.app.listen({host: '127.0.0.1', port: 0})
    const url = `http://127.0.0.1:${(hub.app.server.address() as {port: number}).port}`
    fake = await joinFakeBroker(Object.assign(hub, {url}) as unknown as LiveHub, 'gap')
    admin = new pg.Client({connectionString: pgUrl()})
    await admin.connect()
  })
  afterAll(async () => {
    await fake?.close()
    await hub?.dispose()
    await admin?.end()
    await db?.drop()
  })

  const listeners = async () => (await admin.query<{pid: number}>(`select pid from pg_stat_activity where datname = $1 and query ilike 'listen %'`, [dbName])).rows.map((r) => r.pid)

  it('a channel subscribed to is a gap until its LISTEN runs: caches hear of it once it does', async () => {
    let gaps = 0
    const off = hub.store.events.onGap(() => gaps++)
    const unsubscribe = hub.store.events.subscribe('svc_test_new_channel', () => {})
    try {
      await waitFor(async () => gaps > 0, 10_000, 'the gap once the new channel is listened to')
      // By then the Hub's listener runs that LISTEN (its last query).
      expect((await listeners()).length).toBe(1)
      const last = await admin.query<{query: string}>(`select query from pg_stat_activity where datname = $1 and query ilike 'listen %'`, [dbName])
      expect(last.rows[0].query).toBe('listen svc_test_new_channel')
    } finally {
      unsubscribe()
      off()
    }
  })

  it('a token revoked while the listener was down is refused once it listens again', async () => {
    const project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'gap'}})).body.project.id
    const created = await hub.request('POST', '/api/v1/agents', {body: {projectId: project, name: 'gap', harnessConfig: 'shell', brokerId: fake.brokerId}})
    expect(created.status).toBe(201)
    const id = created.body.agent.id as string
    const token = (fake.requests('agent.start')[0].params as {env: Record<string, string>}).env.SVC_AUTH_TOKEN
    const report = (detail: string) => hub.request('POST', `/api/v1/agents/${id}/status`, {token, body: {activity: 'executing', detail}})
    expect((await report('cached')).status).toBe(200)

    // Revoked with nobody announcing it (as a notification lost in the gap): the cache still answers.
    await hub.store.agents.revokeTokens(id, new Date().toISOString())
    expect((await report('still cached')).status).toBe(200)

    const before = await listeners()
    expect(before.length).toBe(1)
    await admin.query('select pg_terminate_backend($1)', [before[0]])
    await waitFor(async () => {
      const now = await listeners()
      return now.length === 1 && now[0] !== before[0]
    }, 10_000, 'the Hub listening again on a new connection')

    const refused = await report('after the gap')
    expect([refused.status, refused.body.error?.code]).toEqual([401, 'unauthorized'])
    expect((await hub.store.agents.get(id))?.detail).toBe('still cached')
  })
})
