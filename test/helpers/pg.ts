import {randomBytes} from 'node:crypto'
import pg from 'pg'

export const pgUrl = () => process.env.SVC_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test'

let availability: Promise<boolean> | null = null

/**
 * This suite run's mark (global-setup.ts sets it before the workers start), in the name of every
 * database a test makes: what a test leaves behind (a Hub never disposed) is dropped when the
 * run ends, and only this run's, as other checkouts may be testing on the same server.
 */
export const PG_RUN_ENV = 'SVC_TEST_PG_RUN'
const testRun = () => (process.env[PG_RUN_ENV] ??= randomBytes(3).toString('hex'))

/** Drops the databases tests of this run made and left (the run's teardown). */
export async function dropRunDatabases(): Promise<string[]> {
  const run = process.env[PG_RUN_ENV]
  if (!run || !/^[0-9a-f]{6}$/.test(run)) return []
  const admin = new pg.Client({connectionString: pgUrl()})
  await admin.connect()
  try {
    const {rows} = await admin.query<{datname: string}>(`select datname from pg_database where datname ~ $1`, [`^t_${run}_[0-9a-f]{12}$`])
    for (const r of rows) await admin.query(`drop database if exists ${r.datname} with (force)`)
    return rows.map((r) => r.datname)
  } finally {
    await admin.end().catch(() => {})
  }
}

/** True when the test PostgreSQL server answers. */
export function pgAvailable(): Promise<boolean> {
  availability ??= (async () => {
    const client = new pg.Client({connectionString: pgUrl(), connectionTimeoutMillis: 3000})
    try {
      await client.connect()
      await client.query('select 1')
      return true
    } catch {
      return false
    } finally {
      await client.end().catch(() => {})
    }
  })()
  return availability
}

/**
 * A fresh schema for one test run; the returned URL selects it through `search_path`, so the
 * Hub under test needs no special option. `drop()` removes it.
 */
export async function createPgSchema(): Promise<{url: string; schema: string; drop: () => Promise<void>}> {
  const schema = 't_' + randomBytes(6).toString('hex')
  const admin = new pg.Client({connectionString: pgUrl()})
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const u = new URL(pgUrl())
  u.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: u.toString(),
    schema,
    drop: async () => {
      const c = new pg.Client({connectionString: pgUrl()})
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
    },
  }
}

let template: Promise<string> | null = null

/**
 * The name of a database holding the current schema (every migration applied, nothing else),
 * made once per version of the store's sources and shared by every test process: its name
 * carries a hash of them. Made under an advisory lock so the test processes starting together make
 * it once; older ones (other migration sets) are dropped then.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const {createHash} = await import('node:crypto')
    const {readdirSync, readFileSync} = await import('node:fs')
    // Every source of the store (migrations import its helpers), so a change anywhere there
    // makes a new template rather than reusing one an older migration built.
    const dir = new URL('../../src/store/', import.meta.url)
    const hash = createHash('sha256')
    for (const f of (readdirSync(dir, {recursive: true}) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).sort()) {
      hash.update(`${f}\0${readFileSync(new URL(f, dir))}\0`)
    }
    const name = `svc_tmpl_${hash.digest('hex').slice(0, 16)}`
    const admin = new pg.Client({connectionString: pgUrl()})
    await admin.connect()
    try {
      await admin.query('select pg_advisory_lock(5356, 1)')
      const {rows} = await admin.query(`select datname from pg_database where datname ~ '^svc_tmpl_[0-9a-f]{16}$' order by oid`)
      if (!rows.some((r) => r.datname === name)) {
        // Checkouts with other migrations may be testing beside this one: keep the last few
        // templates (a test process whose template went finds out and makes it again).
        for (const r of rows.slice(0, Math.max(0, rows.length - 3))) await admin.query(`drop database if exists ${r.datname} with (force)`).catch(() => {})
        // Made under another name and renamed when complete: a process killed mid-way leaves
        // no half-migrated template behind the real name.
        const building = `${name}_b`
        await admin.query(`drop database if exists ${building} with (force)`)
        await admin.query(`create database ${building}`)
        const u = new URL(pgUrl())
        u.pathname = `/${building}`
        const {createDb} = await import('../../src/store/create-db.js')
        const {migrate} = await import('../../src/store/migrate.js')
        const h = await createDb({driver: 'postgres', url: u.toString()})
        try {
          await migrate(h)
        } finally {
          await h.close()
        }
        await admin.query(`alter database ${building} rename to ${name}`)
      }
      return name
    } finally {
      await admin.query('select pg_advisory_unlock(5356, 1)').catch(() => {})
      await admin.end().catch(() => {})
    }
  })()
  return template
}

/**
 * A fresh database for one Hub, already migrated: a copy of the migrated template (tens of
 * milliseconds, where migrating a fresh schema takes most of a second on PostgreSQL). The Hub
 * under test still runs its start-up migration pass (finding nothing to apply) and everything
 * after it, as on any start. For tests of migrations themselves use `createPgSchema`.
 */
export async function createMigratedPgDatabase(): Promise<{url: string; drop: () => Promise<void>}> {
  const name = `t_${testRun()}_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({connectionString: pgUrl()})
  await admin.connect()
  try {
    for (let attempt = 0; ; attempt++) {
      const tmpl = await migratedTemplate()
      // WAL_LOG copies only the template's pages (PostgreSQL 15 and later; older servers copy the
      // files with a checkpoint, slower but the same database).
      const walLog = Number((await admin.query('show server_version_num')).rows[0].server_version_num) >= 150000
      try {
        await admin.query(`create database ${name} template ${tmpl}${walLog ? ' strategy wal_log' : ''}`)
        break
      } catch (err) {
        // 3D000: the template was dropped by a run of other migrations: make it again.
        if ((err as {code?: string}).code !== '3D000' || attempt > 0) throw err
        template = null
      }
    }
  } finally {
    await admin.end()
  }
  const u = new URL(pgUrl())
  u.pathname = `/${name}`
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({connectionString: pgUrl()})
      await c.connect()
      await c.query(`drop database if exists ${name} with (force)`)
      await c.end()
    },
  }
}
