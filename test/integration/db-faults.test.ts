import {randomBytes} from 'node:crypto'
import {createServer, connect, type Server, type Socket} from 'node:net'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {createPgSchema, pgAvailable, pgUrl} from '../helpers/pg.js'

/**
 * A TCP proxy to PostgreSQL that can go silent: while paused it holds every byte in both
 * directions (packets dropped by a network, no reset), and delivers them when resumed.
 */
async function silentProxy(target: URL): Promise<{port: number; pause(): void; resume(): void; close(): Promise<void>}> {
  let paused = false
  const pairs: Array<{flush(): void; destroy(): void}> = []
  const server: Server = createServer((client: Socket) => {
    const upstream = connect(Number(target.port || 5432), target.hostname)
    const held: Array<[Socket, Buffer]> = []
    const relay = (to: Socket) => (d: Buffer) => (paused ? held.push([to, d]) : to.write(d))
    client.on('data', relay(upstream))
    upstream.on('data', relay(client))
    const end = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    pairs.push({flush: () => held.splice(0).forEach(([to, d]) => to.write(d)), destroy: end})
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    port: (server.address() as {port: number}).port,
    pause: () => (paused = true),
    resume: () => {
      paused = false
      for (const p of pairs) p.flush()
    },
    close: async () => {
      for (const p of pairs) p.destroy()
      await new Promise((r) => server.close(r))
    },
  }
}

const pgOk = await pgAvailable()

/**
 * Readiness and database faults (CONTRACT "Hosted at scale"): `/readyz` answers 503 within its
 * bound while the database does not answer, refused or silent, and 200 once it does; losing the
 * database's connections (cut by the server) is handled in place: the Hub keeps serving.
 * An unhandled `error` event would fail this file (vitest reports it).
 */
describe.skipIf(!pgOk)(`database faults on PostgreSQL${pgOk ? '' : ' (SKIPPED: no PostgreSQL)'}`, () => {
  let schema: Awaited<ReturnType<typeof createPgSchema>>
  let proxy: Awaited<ReturnType<typeof silentProxy>>
  let hub: TestHub
  const app = 'svc_faults_' + randomBytes(4).toString('hex')

  beforeAll(async () => {
    schema = await createPgSchema()
    proxy = await silentProxy(new URL(pgUrl()))
    const url = new URL(schema.url)
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    // Its connections carry a name of their own, so the test cuts only them (other tests share the server).
    url.searchParams.set('application_name', app)
    hub = await startTestHub('sqlite', {flags: {hosted: true}, env: {SVC_SERVER_AUTH_DEVMODE: 'true', SVC_SERVER_DATABASE_DRIVER: 'postgres', SVC_SERVER_DATABASE_URL: url.toString()}})
  })
  afterAll(async () => {
    await hub?.dispose()
    await proxy?.close()
    await schema?.drop()
  })

  const readyz = async () => (await hub.request('GET', '/readyz', {token: null})).status

  it('connections cut by the server (pg_terminate_backend): no crash, and the Hub answers again', async () => {
    expect(await readyz()).toBe(200)
    const admin = new pg.Client({connectionString: pgUrl()})
    await admin.connect()
    try {
      const {rows} = await admin.query('select pg_terminate_backend(pid) as cut from pg_stat_activity where application_name = $1', [app])
      expect(rows.length).toBeGreaterThan(0)
    } finally {
      await admin.end()
    }
    await waitFor(async () => (await readyz()) === 200, 30_000, 'ready again')
    expect((await hub.request('GET', '/api/v1/projects')).status).toBe(200)
  })

  it('a silent database: /readyz answers 503 (bounded, not pending), and 200 once the database answers again', async () => {
    proxy.pause()
    try {
      const t0 = Date.now()
      const status = await readyz()
      expect(status).toBe(503)
      // The bound is the readiness ping's (3 s): an answer, not a hang (generous for a loaded machine).
      expect(Date.now() - t0).toBeLessThan(10_000)
      const body = (await hub.request('GET', '/readyz', {token: null})).body
      expect(body.error.code).toBe('not_ready')
    } finally {
      proxy.resume()
    }
    await waitFor(async () => (await readyz()) === 200, 30_000, 'ready again')
  })
})
