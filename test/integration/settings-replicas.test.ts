import {randomBytes} from 'node:crypto'
import {Writable} from 'node:stream'
import pg from 'pg'
import pino from 'pino'
import {afterEach, describe, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub, type Hub} from '../../src/main.js'
import {describeEachDialect, pgAvailable, startTestHub, type Dialect, type TestHub} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {pgUrl} from '../helpers/pg.js'
import {createUser} from '../helpers/users.js'

/** A pino logger whose JSON lines land in `lines`. */
function capturingLogger() {
  const lines: Array<Record<string, any>> = []
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l))
      done()
    },
  })
  return {logger: pino({level: 'info'}, sink), lines}
}

const hubName = (h: Hub) => (h.services.settings!.resolved() as any).server?.hub?.hub_name

/** Replica start-up, the poll backstop, LISTEN reconnect and SVC_SERVER_* on Layer-1 keys. */
function suite(dialect: Dialect) {
  const open: Array<{close: () => Promise<void>}> = []
  afterEach(async () => {
    for (const h of open.reverse()) await h.close().catch(() => {})
    open.length = 0
  })
  const primary = async (env: Record<string, string> = {}, logger?: pino.Logger) => {
    const hub = await startTestHub(dialect, {flags: {hosted: true}, env, logger})
    open.push({close: () => hub.dispose()})
    const admin = await createUser(hub, {systemAdmin: true})
    return {hub, token: admin.token}
  }
  /** Another Hub process on the same database (a replica), with its own options. */
  const replica = async (hub: TestHub, opts: {env?: Record<string, string>; settingsPoll?: (tick: () => Promise<void>) => () => void; logger?: pino.Logger} = {}) => {
    const env = {...hub.env, ...opts.env}
    const h = await createHub(resolveBootstrap({port: 0, hosted: true}, env), {env, logger: opts.logger ?? pino({level: 'silent'}), settingsPoll: opts.settingsPoll})
    open.unshift(h)
    return h
  }

  it('poll backstop: a change made behind the event channel\'s back (a direct row write) reaches a replica at its next poll', async () => {
    const {hub} = await primary()
    let tick: (() => Promise<void>) | null = null
    let stopped = false
    const other = await replica(hub, {
      settingsPoll: (t) => {
        tick = t
        return () => (stopped = true)
      },
    })
    expect(tick).not.toBeNull()
    const row = (await hub.store.settingsSections.get('quotas'))!
    // Straight to the table: no service, so no settings change event is published.
    expect(await hub.store.settingsSections.update({...row, value: {...row.value, 'quotas.max_agents_per_project': 31}, origin: 'managed', source: 'admin_api', updatedBy: 'test', updatedAt: new Date().toISOString()}, row.revision)).toBe(true)
    expect(other.services.settings!.agentSettings().quotas.maxAgentsPerProject).not.toBe(31)
    await tick!()
    expect(other.services.settings!.agentSettings().quotas.maxAgentsPerProject).toBe(31)
    await other.close()
    open.shift()
    expect(stopped).toBe(true)
  })

  it('SVC_SERVER_* on a Layer-1 key: logged as deprecated, changes only the seed and fallback, never a saved value', async () => {
    const first = capturingLogger()
    const {hub, token} = await primary({SVC_SERVER_HUB_HUBNAME: 'From Env'}, first.logger)
    const deprecated = (lines: Array<Record<string, any>>) => lines.filter((l) => l.level === 40 && /deprecated/.test(l.msg))
    expect(deprecated(first.lines).map((l) => l.key)).toEqual(['server.hub.hub_name'])
    // The seed: the section is seeded from the variable.
    expect(hubName(hub)).toBe('From Env')
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {server: {hub: {hub_name: 'Saved'}}}})).status).toBe(200)
    expect(hubName(hub)).toBe('Saved')
    await hub.close()
    // A restart with a different value: logged again, and the saved value stays.
    const second = capturingLogger()
    const again = await replica(hub, {env: {SVC_SERVER_HUB_HUBNAME: 'Changed Env'}, logger: second.logger})
    expect(deprecated(second.lines).map((l) => l.key)).toEqual(['server.hub.hub_name'])
    expect(hubName(again)).toBe('Saved')
    expect((again.services.settings!.view() as any).sections.hub).toMatchObject({origin: 'managed', superseded: true})
    // The fallback: after a reset the variable applies again.
    await again.services.settings!.reset({principal: {kind: 'user', id: 'admin', systemAdmin: true}, credentialKind: 'dev', requestId: 't'} as never, 'hub')
    expect(hubName(again)).toBe('Changed Env')
  })
}

describeEachDialect('settings: replicas and bootstrap variables', suite)

const pgOk = await pgAvailable()

/** The dedicated LISTEN connection of one Hub (its last query is a LISTEN of one of its channels), found by the application_name its URL carries. */
async function listeningPid(admin: pg.Client, app: string): Promise<number | null> {
  const {rows} = await admin.query<{pid: number}>("select pid from pg_stat_activity where application_name = $1 and query ilike 'listen svc_%'", [app])
  return rows[0]?.pid ?? null
}

describe.skipIf(!pgOk)(`settings: LISTEN reconnect [postgres]${pgOk ? '' : ' (SKIPPED: no PostgreSQL)'}`, () => {
  let hub: TestHub | undefined
  let other: Hub | undefined
  const admin = new pg.Client({connectionString: pgUrl()})
  afterEach(async () => {
    await other?.close().catch(() => {})
    await hub?.dispose()
    await admin.end().catch(() => {})
  })

  it('a replica whose LISTEN backend is terminated listens again, and a later save still reaches it (the poll never runs)', async () => {
    await admin.connect()
    hub = await startTestHub('postgres', {flags: {hosted: true}})
    const {token} = await createUser(hub, {systemAdmin: true})
    const app = `svc_replica_${randomBytes(4).toString('hex')}`
    const url = new URL(hub.env.SVC_SERVER_DATABASE_URL!)
    url.searchParams.set('application_name', app)
    const env = {...hub.env, SVC_SERVER_DATABASE_URL: url.toString()}
    // No poll: only the settings change event can carry the save.
    other = await createHub(resolveBootstrap({port: 0, hosted: true}, env), {env, logger: pino({level: 'silent'}), settingsPoll: () => () => {}})
    const before = await waitFor(() => listeningPid(admin, app), 10_000, 'the replica listening')
    const {rows} = await admin.query<{ok: boolean}>('select pg_terminate_backend($1) as ok', [before])
    expect(rows[0].ok).toBe(true)
    const after = await waitFor(async () => {
      const pid = await listeningPid(admin, app)
      return pid !== null && pid !== before ? pid : null
    }, 10_000, 'the replica listening again')
    expect(after).not.toBe(before)
    const r = await hub.request('PUT', '/api/v1/admin/server-config', {token, body: {quotas: {max_agents_per_project: 23}}})
    expect(r.status).toBe(200)
    await waitFor(() => other!.services.settings!.agentSettings().quotas.maxAgentsPerProject === 23, 10_000, 'the save on the replica')
  })
})
