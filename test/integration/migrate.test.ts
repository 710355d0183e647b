import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {sql} from 'kysely'
import {afterEach, expect, it} from 'vitest'
import {createDb, type DbHandle} from '../../src/store/create-db.js'
import {migrate} from '../../src/store/migrate.js'
import {MIGRATIONS} from '../../src/store/migrations/index.js'
import {agentConfigFactsOfText} from '../../src/store/agent-config-facts.js'
import {agentsRepo} from '../../src/store/repositories/agents.js'
import {agentRow} from '../helpers/legacy-fixture.js'
import {describeEachDialect, type Dialect} from '../helpers/hub.js'
import {createPgSchema} from '../helpers/pg.js'

const ALL = Object.keys(MIGRATIONS).sort()

describeEachDialect('migrations', (dialect: Dialect) => {
  const cleanup: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c()
  })

  async function open(): Promise<DbHandle> {
    if (dialect === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'svc-migrate-'))
      cleanup.push(() => rmSync(dir, {recursive: true, force: true}))
      const h = await createDb({driver: 'sqlite', url: join(dir, 'hub.db')})
      cleanup.push(() => h.close())
      return h
    }
    const s = await createPgSchema()
    cleanup.push(() => s.drop())
    const h = await createDb({driver: 'postgres', url: s.url})
    cleanup.push(() => h.close())
    return h
  }

  const recorded = async (h: DbHandle) => (await sql<{name: string}>`select name from svc_migrations order by name`.execute(h.db)).rows.map((r) => r.name)

  it('applies every migration once, in order; a second run applies none', async () => {
    const h = await open()
    expect((await migrate(h)).applied).toEqual(ALL)
    expect(await recorded(h)).toEqual(ALL)
    expect((await migrate(h)).applied).toEqual([])
  })

  // Replicas share one PostgreSQL schema; on SQLite one immediate transaction does the same job.
  it.runIf(dialect === 'postgres')('two runs at the same moment migrate once between them', async () => {
    const h1 = await open()
    const h2 = await createDb({driver: 'postgres', url: await currentUrl(h1)})
    cleanup.push(() => h2.close())
    const [a, b] = await Promise.all([migrate(h1), migrate(h2)])
    expect([...a.applied, ...b.applied].sort()).toEqual(ALL)
    expect(await recorded(h1)).toEqual(ALL)
  })

  it('adopts the records of a database migrated by an earlier build (kysely_migration)', async () => {
    const h = await open()
    // An earlier build applied the first migration and recorded it in Kysely's table.
    await MIGRATIONS[ALL[0]].up(h.db as never)
    await sql`create table kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(h.db)
    await sql`insert into kysely_migration (name, timestamp) values (${ALL[0]}, ${new Date().toISOString()})`.execute(h.db)
    expect((await migrate(h)).applied).toEqual(ALL.slice(1))
    expect(await recorded(h)).toEqual(ALL)
  })

  it('0013 fills the config facts of existing agents from their config; agents written later get them with it', async () => {
    const h = await open()
    await migrate(h, {upTo: '0012-adoption-original-covering'})
    const configs = ['{broken', '[1]', '{"applied":null}', '{}', '{"applied":{"defaultAgentRole":{"value":"readonly"}}}',
      '{"applied":{"defaultCloudIdentityMode":{"value":"Assign"},"defaultCloudIdentityServiceAccountId":{"value":"sa@x"}}}',
      '{"applied":{"defaultCloudIdentityMode":{"value":"Assign"},"defaultCloudIdentityServiceAccountId":{"value":""}}}']
    // More rows than one page of the fill, most of them with the applied role agent creation writes.
    const rows = [
      ...configs.map((config, i) => agentRow({id: `odd-${i}`, projectId: 'p', name: `odd-${i}`, role: 'full', creator: {kind: 'user', id: 'u'}, config})),
      ...Array.from({length: 1203}, (_, i) => agentRow({id: `a-${String(i).padStart(5, '0')}`, projectId: 'p', name: `a-${i}`, role: i % 3 ? 'full' : 'baseline', creator: {kind: 'user', id: 'u'}, assignAccount: i % 7 ? undefined : 'sa@x'})),
    ]
    for (let i = 0; i < rows.length; i += 200) await h.db.insertInto('agents').values(rows.slice(i, i + 200) as never).execute()
    await migrate(h)
    const got = await h.db.selectFrom('agents').select(['id', 'config_readable', 'applied_role', 'assign_mode_service_account']).execute()
    expect(got).toHaveLength(rows.length)
    const byId = new Map(got.map((r) => [r.id, r]))
    for (const r of rows) {
      const f = agentConfigFactsOfText(r.config)
      expect(byId.get(r.id), r.config).toEqual({id: r.id, config_readable: f.readable ? 1 : 0, applied_role: f.appliedRole, assign_mode_service_account: f.assignModeServiceAccount ? 1 : 0})
    }
    // The cases the fill must tell apart, spelled out.
    expect(byId.get('odd-0')).toMatchObject({config_readable: 0, applied_role: null})
    expect(byId.get('odd-4')).toMatchObject({config_readable: 1, applied_role: 'readonly', assign_mode_service_account: 0})
    expect(byId.get('odd-5')).toMatchObject({config_readable: 1, assign_mode_service_account: 1})
    expect(byId.get('a-00003')).toMatchObject({config_readable: 1, applied_role: 'baseline'})

    // Agent creation writes the facts of the config it stores.
    const config = {applied: {defaultAgentRole: {value: 'readonly'}, defaultCloudIdentityMode: {value: 'Assign'}, defaultCloudIdentityServiceAccountId: {value: 'sa-1'}}}
    const now = new Date().toISOString()
    await agentsRepo(h.db, h.driver).insert({id: 'created', projectId: 'p', name: 'created', brokerId: null, phase: 'created', activity: null, detail: '', harnessConfig: 'shell', template: null, task: null, role: 'full', runtime: null, runtimeRef: null, config, error: null, createdBy: {kind: 'user', id: 'u'}, createdAt: now, updatedAt: now})
    const created = await h.db.selectFrom('agents').select(['config_readable', 'applied_role', 'assign_mode_service_account']).where('id', '=', 'created').executeTakeFirstOrThrow()
    expect(created).toEqual({config_readable: 1, applied_role: 'readonly', assign_mode_service_account: 1})
  })
})

/** The search_path schema URL a handle was opened with (PostgreSQL only). */
async function currentUrl(h: DbHandle): Promise<string> {
  const {rows} = await sql<{s: string}>`select current_schema() as s`.execute(h.db)
  const u = new URL(process.env.SVC_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test')
  u.searchParams.set('options', `-c search_path=${rows[0].s}`)
  return u.toString()
}
