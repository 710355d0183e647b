import type {Database as SqliteConnection, Statement} from 'better-sqlite3'
import type {Kysely} from 'kysely'
import type {Exec} from './compiled-statement.js'
import type {Database} from './schema.js'

/**
 * A transaction run on the SQLite connection itself rather than through Kysely: the Hub's most
 * frequent write (a batch of status reports, status-transaction.ts) and a bulk pass's hops
 * (pass-transaction.ts, 100k of them at a start-up migration). Through Kysely each transaction
 * built a Kysely and its repositories and each statement was compiled and queued (~60-100 us of
 * CPU a transaction); here each text is prepared once, for the store's life, and run as it is.
 * Kysely's connection is held for the whole transaction (its driver's lock), so no other query of
 * the store runs between BEGIN and COMMIT, nor joins the transaction.
 */
export function connectionTransaction(db: Kysely<Database>, connection: SqliteConnection, beginText: 'begin' | 'begin immediate') {
  const statements = new Map<string, Statement>()
  const prepared = (text: string): Statement => {
    let st = statements.get(text)
    if (!st) statements.set(text, (st = connection.prepare(text)))
    return st
  }
  const exec: Exec = {
    run: async (text, params) => prepared(text).run(params).changes,
    all: async <Row>(text: string, params: readonly unknown[]) => prepared(text).all(params) as Row[],
  }
  const begin = connection.prepare(beginText)
  const commit = connection.prepare('commit')
  const rollback = connection.prepare('rollback')
  /** Runs `fn` between BEGIN and COMMIT; rolls back when it throws. */
  const run = <T>(fn: () => Promise<T>): Promise<T> =>
    db.getExecutor().provideConnection(async () => {
      begin.run()
      try {
        const out = await fn()
        commit.run()
        return out
      } catch (err) {
        // A failed statement may have ended the transaction already (SQLite rolls back on some errors).
        if (connection.inTransaction) rollback.run()
        throw err
      }
    })
  return {exec, run}
}
