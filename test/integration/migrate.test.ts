import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
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
const MIGRATOR = fileURLToPath(new URL('../helpers/migrator.ts', import.meta.url))

describeEachDialect('migrations', (dialect: Dialect) => {
  const cleanup: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c()
  })

  /** A fresh database; `url` opens it again (a SQLite file path, a PostgreSQL schema URL). */
  async function open(): Promise<DbHandle & {url: string}> {
    let url: string
    if (dialect === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'svc-migrate-'))
      cleanup.push(() => rmSync(dir, {recursive: true, force: true}))
      url = join(dir, 'hub.db')
    } else {
      const s = await createPgSchema()
      cleanup.push(() => s.drop())
      url = s.url
    }
    const h = await createDb({driver: dialect, url})
    cleanup.push(() => h.close())
    return Object.assign(h, {url})
  }

  /**
   * Two migrations of one database started at the same moment, each on its own connection:
   * on PostgreSQL two handles of this process (replicas share a schema); on SQLite two processes
   * (a file's lock is per process: in one process the second would wait on the first forever).
   */
  async function migrateTwiceAtOnce(url: string): Promise<string[][]> {
    if (dialect === 'postgres') {
      const handles = [await createDb({driver: 'postgres', url}), await createDb({driver: 'postgres', url})]
      cleanup.push(() => Promise.all(handles.map((h) => h.close())).then(() => undefined))
      return (await Promise.all(handles.map((h) => migrate(h)))).map((r) => r.applied)
    }
    const children = [0, 1].map(() => {
      const child = spawn(process.execPath, ['--import', 'tsx', MIGRATOR, url], {stdio: ['pipe', 'pipe', 'pipe']})
      cleanup.push(() => void child.kill('SIGKILL'))
      let out = ''
      let err = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (err += d))
      const ended = new Promise<string[]>((resolve, reject) =>
        child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n')[1])) : reject(new Error(`the migrator exited with ${code}: ${err}`)))),
      )
      return {child, ended, ready: () => out.startsWith('ready\n')}
    })
    const deadline = Date.now() + 60_000
    while (!children.every((c) => c.ready())) {
      if (Date.now() > deadline || children.some((c) => c.child.exitCode !== null)) throw new Error('the migrators did not get ready')
      await new Promise((r) => setTimeout(r, 20))
    }
    for (const c of children) c.child.stdin.write('go\n')
    return Promise.all(children.map((c) => c.ended))
  }

  const recorded = async (h: DbHandle) => (await sql<{name: string}>`select name from svc_migrations order by name`.execute(h.db)).rows.map((r) => r.name)

  it('applies every migration once, in order; a second run applies none', async () => {
    const h = await open()
    expect((await migrate(h)).applied).toEqual(ALL)
    expect(await recorded(h)).toEqual(ALL)
    expect((await migrate(h)).applied).toEqual([])
  })

  // Replicas share one PostgreSQL schema (an advisory lock); on SQLite one immediate transaction does the same job.
  it('two runs at the same moment migrate once between them', async () => {
    const h = await open()
    const [a, b] = await migrateTwiceAtOnce(h.url)
    expect([...a, ...b].sort()).toEqual(ALL)
    expect(await recorded(h)).toEqual(ALL)
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
