import {sql, type Kysely} from 'kysely'
import {kyselyExec, type Exec} from '../compiled-statement.js'
import type {Database} from '../schema.js'

/** WAL pages between automatic checkpoints during a bulk pass (SQLite's default is 1000). */
export const PASS_WAL_AUTOCHECKPOINT = 25_000

/**
 * What a long pass of small transactions (the start-up adoption: one transaction per hop, 100k
 * hops) needs from the database beyond its reads and writes. `changeMark` is asked inside each
 * hop's transaction, so it is written against `Exec` (store/pass-transaction.ts).
 */
export const bulkPassStatements = (x: Exec, driver: 'sqlite' | 'postgres') => ({
  /**
   * A mark that changes whenever another connection commits to the database; null where the
   * database cannot tell (PostgreSQL: callers re-read what they depend on instead). On SQLite,
   * `PRAGMA data_version` (per connection; this connection's own commits leave it as it is).
   * Read inside a transaction it tells the state that transaction reads: equal to a mark read
   * before loading some state, nothing was committed elsewhere since, so that state (kept
   * current with the caller's own writes) is still the database's.
   */
  async changeMark(): Promise<number | null> {
    if (driver !== 'sqlite') return null
    const [r] = await x.all<{data_version: number}>('pragma data_version', [])
    return Number(r.data_version)
  },
})

export const bulkPassRepo = (db: Kysely<Database>, driver: 'sqlite' | 'postgres') => ({
  ...bulkPassStatements(kyselyExec(db), driver),
  /**
   * Runs `fn` with fewer WAL checkpoints on SQLite: each checkpoint copies the WAL into the
   * database file and syncs both, and with the default of one per 1000 pages a pass writing
   * 12 pages per hop checkpoints every 80 hops, rewriting the same index pages each time. The
   * WAL grows to at most PASS_WAL_AUTOCHECKPOINT pages (about 100 MB) instead; durability per
   * commit is unchanged (synchronous NORMAL either way). Afterwards the WAL is checkpointed and
   * truncated and the setting restored. On PostgreSQL it only runs `fn`.
   */
  async withFewerCheckpoints<T>(fn: () => Promise<T>): Promise<T> {
    if (driver !== 'sqlite') return fn()
    const before = Number((await sql<{wal_autocheckpoint: number}>`pragma wal_autocheckpoint`.execute(db)).rows[0].wal_autocheckpoint)
    await sql.raw(`pragma wal_autocheckpoint = ${PASS_WAL_AUTOCHECKPOINT}`).execute(db)
    try {
      return await fn()
    } finally {
      await sql.raw(`pragma wal_autocheckpoint = ${Math.trunc(before)}`).execute(db)
      // Best effort: a reader in another process keeps part of the WAL; the next checkpoint gets it.
      await sql.raw('pragma wal_checkpoint(TRUNCATE)').execute(db).catch(() => {})
    }
  },
})

export type BulkPassRepo = ReturnType<typeof bulkPassRepo>
