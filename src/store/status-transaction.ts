import type {Database as SqliteConnection, Statement} from 'better-sqlite3'
import type {Kysely} from 'kysely'
import {kyselyExec, type Exec} from './compiled-statement.js'
import {statusStatements} from './repositories/agent-status-write.js'
import type {Database} from './schema.js'

/** What a batch of status reports writes: the agents' rows and their events. */
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
 * does (pass-transaction.ts: Kysely's connection held, so nothing else of the store runs or
 * joins in between), each text prepared once; BEGIN IMMEDIATE because it reads the row, then
 * writes it. On PostgreSQL it is a Kysely transaction with only these statements. `onEvent` is
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
  // A handful of texts (one update per set of fields a step carries): kept for the store's life.
  const statements = new Map<string, Statement>()
  const prepared = (text: string): Statement => {
    let st = statements.get(text)
    if (!st) statements.set(text, (st = connection.prepare(text)))
    return st
  }
  const x: Exec = {
    run: async (text, params) => prepared(text).run(params).changes,
    all: async <Row>(text: string, params: readonly unknown[]) => prepared(text).all(params) as Row[],
  }
  const begin = connection.prepare('begin immediate')
  const commit = connection.prepare('commit')
  const rollback = connection.prepare('rollback')
  return async (fn) => {
    let appended = false
    const tx: StatusTx = {agents: statusStatements(x, () => (appended = true))}
    const out = await db.getExecutor().provideConnection(async () => {
      begin.run()
      try {
        const r = await fn(tx)
        commit.run()
        return r
      } catch (err) {
        // A failed statement may have ended the transaction already (SQLite rolls back on some errors).
        if (connection.inTransaction) rollback.run()
        throw err
      }
    })
    if (appended) onEvent()
    return out
  }
}
