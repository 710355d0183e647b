import type {Database as SqliteConnection} from 'better-sqlite3'
import type {Kysely} from 'kysely'
import {connectionTransaction} from './connection-transaction.js'
import {passCheckpointer, type PassCheckpointOptions} from './pass-checkpointer.js'
import {plannerAgentStatements} from './repositories/agents.js'
import {bulkPassStatements} from './repositories/bulk-pass.js'
import {adoptionStatements} from './repositories/delegation-adoptions.js'
import {edgeStatements} from './repositories/delegation-edges.js'
import type {Database} from './schema.js'

/**
 * What one transaction of a bulk pass reads and writes: a start-up adoption hop (its chain
 * re-read, the original edge deactivated, the adopted edge, the record). A
 * subset of the repositories, with the same statements: `Repos` is a `PassTx`.
 */
export interface PassTx {
  bulkPass: Pick<ReturnType<typeof bulkPassStatements>, 'changeMark'>
  delegationEdges: ReturnType<typeof edgeStatements>
  delegationAdoptions: ReturnType<typeof adoptionStatements>
  agents: ReturnType<typeof plannerAgentStatements>
}

/**
 * Runs `fn` as one transaction of a bulk pass: all of it is committed, or none. `end`, where
 * present, is called once the pass's last transaction is done (it stops what the pass started
 * beside its transactions: SQLite's background checkpoints, pass-checkpointer.ts).
 */
export type PassTransaction = (<T>(fn: (tx: PassTx) => Promise<T>) => Promise<T>) & {end?: () => Promise<void>}

/**
 * SQLite: a pass transaction on the connection itself (connection-transaction.ts). Through
 * Kysely a transaction of five statements cost ~60 us of CPU more; a start-up adoption runs 100k
 * of them. BEGIN is deferred, as Kysely's: a read snapshot taken in it that another connection
 * then writes past makes the first write fail (SQLITE_BUSY_SNAPSHOT), and the transaction rolls
 * back. After each commit the checkpointer may move the WAL's checkpoints off this thread.
 */
export function sqlitePassTransaction(db: Kysely<Database>, connection: SqliteConnection, checkpoints: PassCheckpointOptions = {}): PassTransaction {
  const {exec: x, run} = connectionTransaction(db, connection, 'begin')
  const tx: PassTx = {
    bulkPass: bulkPassStatements(x, 'sqlite'),
    delegationEdges: edgeStatements(x),
    delegationAdoptions: adoptionStatements(x),
    agents: plannerAgentStatements(x),
  }
  const checkpointer = passCheckpointer(connection, checkpoints)
  const pass = async <T>(fn: (tx: PassTx) => Promise<T>): Promise<T> => {
    const out = await run(() => fn(tx))
    checkpointer.committed()
    return out
  }
  return Object.assign(pass, {end: checkpointer.end})
}
