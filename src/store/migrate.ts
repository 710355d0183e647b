import {sql, type Kysely} from 'kysely'
import type {DbHandle} from './create-db.js'
import {MIGRATIONS} from './migrations/index.js'
import type {Database} from './schema.js'

// Arbitrary constant naming the lock; per-schema so isolated schemas do not serialise.
const LOCK_NAMESPACE = 0x5356_4301

export interface MigrateResult {
  applied: string[]
}

export interface MigrateOptions {
  /** Stop after this migration (the legacy fixture builder writes an older release's schema). */
  upTo?: string
  /**
   * Runs after the schema is current, still under the migration lock on PostgreSQL (data
   * migrations such as the delegation backfill and provenance adoption, which must run once
   * across replicas). On SQLite it runs after the schema transaction commits: the store's one
   * connection is busy until then, and a file is not shared by replicas.
   */
  afterSchema?: () => Promise<void>
}

type Db = Kysely<Database>

/**
 * Applies pending migrations in name order, each with its bookkeeping row in one transaction.
 * The bookkeeping lives in `svc_migrations` in the database's own schema. (Kysely's migrator
 * introspects every table of every schema to find its own, which fails when another schema is
 * dropped at that moment; this one never looks outside its table.)
 */
async function applyPending(db: Db, nowIso: string, adoptLegacy: () => Promise<string[]>, eachInTransaction: boolean, upTo?: string): Promise<MigrateResult> {
  await sql`create table if not exists svc_migrations (name text primary key, applied_at text not null)`.execute(db)
  let done = new Set((await sql<{name: string}>`select name from svc_migrations`.execute(db)).rows.map((r) => r.name))
  if (done.size === 0) {
    // A database migrated by an earlier build recorded its migrations in kysely_migration.
    for (const name of await adoptLegacy()) await sql`insert into svc_migrations (name, applied_at) values (${name}, ${nowIso})`.execute(db)
    done = new Set((await sql<{name: string}>`select name from svc_migrations`.execute(db)).rows.map((r) => r.name))
  }
  const applied: string[] = []
  for (const name of Object.keys(MIGRATIONS).sort()) {
    if (upTo !== undefined && name > upTo) break
    if (done.has(name)) continue
    const run = async (x: Db) => {
      await MIGRATIONS[name].up(x as unknown as Kysely<unknown>)
      await sql`insert into svc_migrations (name, applied_at) values (${name}, ${nowIso})`.execute(x)
    }
    // SQLite runs the whole pass in one transaction already; PostgreSQL commits each migration.
    if (eachInTransaction) await db.transaction().execute(run)
    else await run(db)
    applied.push(name)
  }
  return {applied}
}

async function legacyNames(db: Db, exists: boolean): Promise<string[]> {
  if (!exists) return []
  const rows = (await sql<{name: string}>`select name from kysely_migration`.execute(db)).rows
  return rows.map((r) => r.name).filter((n) => n in MIGRATIONS)
}

/**
 * Brings the schema to the latest migration. On PostgreSQL it holds a session advisory lock on
 * one dedicated connection, so replicas starting together migrate once: the second waits, then
 * finds nothing to do. On SQLite the whole run is one immediate transaction, which excludes any
 * other process migrating the same file.
 */
export async function migrate(handle: DbHandle, opts: MigrateOptions = {}): Promise<MigrateResult> {
  const nowIso = new Date().toISOString()
  if (handle.driver === 'sqlite') {
    const result = await handle.db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn)
      try {
        const legacy = async () => {
          const {rows} = await sql<{n: number}>`select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(conn)
          return legacyNames(conn, Number(rows[0].n) > 0)
        }
        const r = await applyPending(conn, nowIso, legacy, false, opts.upTo)
        await sql`commit`.execute(conn)
        return r
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => {})
        throw err
      }
    })
    await opts.afterSchema?.()
    return result
  }
  return handle.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${LOCK_NAMESPACE}, hashtext(current_schema()))`.execute(conn)
    try {
      const legacy = async () => {
        const {rows} = await sql<{t: string | null}>`select to_regclass('kysely_migration')::text as t`.execute(conn)
        return legacyNames(conn, rows[0].t !== null)
      }
      const r = await applyPending(conn, nowIso, legacy, true, opts.upTo)
      await opts.afterSchema?.()
      return r
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_NAMESPACE}, hashtext(current_schema()))`.execute(conn)
    }
  })
}
