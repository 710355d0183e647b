import type {Database as SqliteConnection, Statement} from 'better-sqlite3'
import type {Kysely} from 'kysely'
import type {Exec} from './compiled-statement.js'
import {plannerAgentStatements} from './repositories/agents.js'
import {bulkPassStatements} from './repositories/bulk-pass.js'
import {adoptionStatements} from './repositories/delegation-adoptions.js'
import {edgeStatements} from './repositories/delegation-edges.js'
import {auditStatements} from './repositories/messages.js'
import type {Database} from './schema.js'

/**
 * What one transaction of a bulk pass reads and writes: a start-up adoption hop (its chain
 * re-read, the original edge deactivated, the adopted edge, the record, the audit record). A
 * subset of the repositories, with the same statements: `Repos` is a `PassTx`.
 */
export interface PassTx {
  bulkPass: Pick<ReturnType<typeof bulkPassStatements>, 'changeMark'>
  delegationEdges: ReturnType<typeof edgeStatements>
  delegationAdoptions: ReturnType<typeof adoptionStatements>
  agents: ReturnType<typeof plannerAgentStatements>
  audit: ReturnType<typeof auditStatements>
}

/** Runs `fn` as one transaction of a bulk pass: all of it is committed, or none. */
export type PassTransaction = <T>(fn: (tx: PassTx) => Promise<T>) => Promise<T>

/**
 * SQLite: a pass transaction on the connection itself. Through Kysely a transaction of five
 * statements cost ~60 us of CPU more (a Kysely and every repository built per transaction, a
 * compiled query and the driver's queue per statement); a start-up adoption runs 100k of them.
 * Here each text is prepared once and run as it is, on better-sqlite3 directly. Kysely's
 * connection is held for the whole transaction (its driver's lock), so no other query of this
 * store runs between BEGIN and COMMIT, nor joins the transaction. BEGIN is deferred, as
 * Kysely's: a read snapshot taken in it that another connection then writes past makes the
 * first write fail (SQLITE_BUSY_SNAPSHOT), and the transaction rolls back.
 */
export function sqlitePassTransaction(db: Kysely<Database>, connection: SqliteConnection): PassTransaction {
  // A few fixed texts (an `in` list of one or two IDs, two update shapes): kept for the store's life.
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
  const tx: PassTx = {
    bulkPass: bulkPassStatements(x, 'sqlite'),
    delegationEdges: edgeStatements(x),
    delegationAdoptions: adoptionStatements(x),
    agents: plannerAgentStatements(x),
    audit: auditStatements(x),
  }
  const begin = connection.prepare('begin')
  const commit = connection.prepare('commit')
  const rollback = connection.prepare('rollback')
  return (fn) =>
    db.getExecutor().provideConnection(async () => {
      begin.run()
      try {
        const out = await fn(tx)
        commit.run()
        return out
      } catch (err) {
        // A failed statement may have ended the transaction already (SQLite rolls back on some errors).
        if (connection.inTransaction) rollback.run()
        throw err
      }
    })
}
