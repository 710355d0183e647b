import {Migrator, sql, type Kysely, type MigrationProvider} from 'kysely'
import type {DbHandle} from './create-db.js'
import {MIGRATIONS} from './migrations/index.js'
import type {Database} from './schema.js'

const provider: MigrationProvider = {getMigrations: async () => MIGRATIONS}

// Arbitrary constant naming the lock; per-schema so isolated test schemas do not serialise.
const LOCK_NAMESPACE = 0x5356_4301

export interface MigrateResult {
  applied: string[]
}

async function runMigrator(db: Kysely<Database>, schema?: string): Promise<MigrateResult> {
  // Kysely finds its bookkeeping tables in any schema unless told which: pin it to ours.
  const migrator = new Migrator({db, provider, ...(schema && {migrationTableSchema: schema})})
  const {error, results} = await migrator.migrateToLatest()
  if (error) throw error
  return {applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)}
}

/**
 * Brings the schema to the latest migration. On PostgreSQL it holds a session advisory lock on
 * one dedicated connection, so replicas starting together migrate once: the second waits, then
 * finds nothing to do. Kysely's own migration lock alone is not enough because creating its
 * bookkeeping tables races.
 */
export async function migrate(handle: DbHandle): Promise<MigrateResult> {
  if (handle.driver === 'sqlite') return runMigrator(handle.db)
  return handle.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${LOCK_NAMESPACE}, hashtext(current_schema()))`.execute(conn)
    try {
      const {rows} = await sql<{schema: string}>`select current_schema() as schema`.execute(conn)
      return await runMigrator(conn, rows[0].schema)
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_NAMESPACE}, hashtext(current_schema()))`.execute(conn)
    }
  })
}
