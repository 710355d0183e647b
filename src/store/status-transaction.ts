import type {Database as SqliteConnection} from 'better-sqlite3'
import type {Kysely} from 'kysely'
import {kyselyExec} from './compiled-statement.js'
import {connectionTransaction} from './connection-transaction.js'
import {statusStatements} from './repositories/agent-status-write.js'
import type {Database} from './schema.js'

/** What a batch of status reports writes (the agents' rows and their events), and the one read it makes besides: pending approvals. */
export interface StatusTx {
  agents: ReturnType<typeof statusStatements>
}

/** Runs `fn` as one transaction of the status writer: all of it is committed, or none. */
export type StatusTransaction = <T>(fn: (tx: StatusTx) => Promise<T>) => Promise<T>

/**
 * The status writer's transaction (domain/agents/status-writer.ts), one per batch of reports,
 * the Hub's most frequent write. Through `store.transaction` a batch cost ~100 us of CPU more
 * than its statements: a Kysely and all ~20 repositories built per transaction, and a compiled
 * query and a trip through the driver's queue per statement; under a closed loop of reports a
 * batch holds only a few of them. On SQLite it runs on the connection itself, as a bulk pass's
 * does (connection-transaction.ts), each text prepared once; BEGIN IMMEDIATE because it reads
 * the row, then writes it. On PostgreSQL it is a Kysely transaction with only these statements. `onEvent` is
 * called once a transaction that appended agent events has committed (the store wakes the
 * replicas' event feeds).
 */
export function statusTransaction(db: Kysely<Database>, connection: SqliteConnection | undefined, onEvent: () => void): StatusTransaction {
  if (!connection) {
    return async (fn) => {
      let appended = false
      const out = await db.transaction().execute((trx) => fn({agents: statusStatements(kyselyExec<Database>(trx), () => (appended = true))}))
      if (appended) onEvent()
      return out
    }
  }
  const {exec: x, run} = connectionTransaction(db, connection, 'begin immediate')
  return async (fn) => {
    let appended = false
    const tx: StatusTx = {agents: statusStatements(x, () => (appended = true))}
    const out = await run(() => fn(tx))
    if (appended) onEvent()
    return out
  }
}
