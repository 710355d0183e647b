import {chmodSync, existsSync, mkdirSync} from 'node:fs'
import {dirname} from 'node:path'
import {Kysely, PostgresDialect, SqliteDialect, sql} from 'kysely'
import type {Database} from './schema.js'
import type {ArrayRead} from './store.js'
import {withStatementCache} from './sqlite-statements.js'
import {sqliteNativeBinding} from './native-binding.js'
import {markUnreachable} from './db-errors.js'

export type Driver = 'sqlite' | 'postgres'

export interface DbOptions {
  driver: Driver
  /** SQLite file path or `postgres://` URL (a `?options=-c search_path=x` selects a schema). */
  url: string
  /** Maximum PostgreSQL pool size. */
  poolSize?: number
}

export interface DbHandle {
  db: Kysely<Database>
  driver: Driver
  /**
   * SQLite only: runs a read and returns each row as an array of values. Bulk reads of 100k
   * rows (the delegation planner) spend most of their time building row objects; arrays halve
   * it. Synchronous, so callers must hold the connection (see store.ts).
   */
  readArrays?: (reads: readonly ArrayRead[]) => void
  /** SQLite only: the connection under Kysely, for a bulk pass's transactions (pass-transaction.ts). */
  connection?: import('better-sqlite3').Database
  close(): Promise<void>
}

/**
 * The only place that picks SQLite or PostgreSQL. SQLite runs in WAL mode with foreign keys
 * on and a busy timeout, so a second process (the CLI, a test) reading the file never fails
 * at once on a lock.
 */
export async function createDb(opts: DbOptions): Promise<DbHandle> {
  if (opts.driver === 'sqlite') {
    const {default: Sqlite} = await import('better-sqlite3')
    // The database holds credentials' hashes and sealed secrets: its directory is created 0700
    // and its files are the owner's only (0600), whatever the umask.
    if (opts.url !== ':memory:') mkdirSync(dirname(opts.url), {recursive: true, mode: 0o700})
    // Inside the single executable the addon comes from an embedded asset (native-binding.ts).
    const nativeBinding = await sqliteNativeBinding()
    const database = new Sqlite(opts.url, nativeBinding ? {nativeBinding: nativeBinding as unknown as string} : {})
    database.pragma('journal_mode = WAL')
    if (opts.url !== ':memory:') for (const f of [opts.url, `${opts.url}-wal`, `${opts.url}-shm`]) if (existsSync(f)) chmodSync(f, 0o600)
    database.pragma('foreign_keys = ON')
    database.pragma('busy_timeout = 5000')
    database.pragma('synchronous = NORMAL')
    const db = new Kysely<Database>({dialect: new SqliteDialect({database: withStatementCache(database)})})
    const statements = new Map<string, import('better-sqlite3').Statement>()
    // Rows are visited as they are stepped, not collected first: a bulk read of 100k rows then
    // leaves only what the visitor keeps, and the value arrays die young (cheap to collect).
    // Several reads run in one read transaction (a savepoint inside the caller's), so they see
    // one state of the database, as one joined query would.
    const readArrays = (reads: readonly ArrayRead[]) => {
      const run = () => {
        for (const {text, params = [], onRow} of reads) {
          let st = statements.get(text)
          if (!st) statements.set(text, (st = database.prepare(text).raw(true)))
          for (const row of st.iterate(...params) as IterableIterator<unknown[]>) onRow(row)
        }
      }
      if (reads.length > 1) database.transaction(run)()
      else run()
    }
    return {db, driver: 'sqlite', readArrays, connection: database, close: () => db.destroy()}
  }
  const pg = await import('pg')
  const Pool = pg.default?.Pool ?? (pg as unknown as {Pool: typeof import('pg').Pool}).Pool
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    // A database that does not answer (a silent network cut) must not hold a caller for ever:
    // waiting for a connection is bounded, and TCP keepalive finds a dead peer of an idle one.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  })
  // A lost connection is an error handled in place, never a crash: the pool's `error` covers
  // idle clients, and every client keeps its own listener while checked out too (pg emits
  // `error` on a client whose connection ends between queries: "Connection terminated
  // unexpectedly", with no listener an uncaught exception). The query in flight rejects, the
  // pool drops the client, and the next query opens a new connection.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  // A connection that cannot be opened (refused, silent) is the database being unreachable, not
  // a fault of the request: tagged here, where it is known, for the error handler's 503.
  const connect = pool.connect.bind(pool) as () => Promise<import('pg').PoolClient>
  pool.connect = (async () => {
    try {
      return await connect()
    } catch (err) {
      throw markUnreachable(err)
    }
  }) as typeof pool.connect
  const db = new Kysely<Database>({dialect: new PostgresDialect({pool})})
  return {db, driver: 'postgres', close: () => db.destroy()}
}

/** How long getting a PostgreSQL connection may take before the caller gets an error. */
const CONNECT_TIMEOUT_MS = 5000

/** How long readiness waits for the database before it says it does not answer. */
export const PING_TIMEOUT_MS = 3000

/**
 * Round-trips the database (readiness), bounded: a silent database (packets dropped, no reset)
 * would otherwise leave the query, and the readiness answer, pending until TCP gives up.
 */
export async function ping(db: Kysely<Database>, timeoutMs = PING_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([sql`select 1`.execute(db), late])
  } finally {
    clearTimeout(timer)
  }
}
