import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {sql} from 'kysely'
import {afterEach, expect, it} from 'vitest'
import {createDb, type DbHandle} from '../../src/store/create-db.js'
import {migrate} from '../../src/store/migrate.js'
import {MIGRATIONS} from '../../src/store/migrations/index.js'
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
})

/** The search_path schema URL a handle was opened with (PostgreSQL only). */
async function currentUrl(h: DbHandle): Promise<string> {
  const {rows} = await sql<{s: string}>`select current_schema() as s`.execute(h.db)
  const u = new URL(process.env.SVC_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test')
  u.searchParams.set('options', `-c search_path=${rows[0].s}`)
  return u.toString()
}
