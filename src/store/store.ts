import type {Kysely} from 'kysely'
import {createDb, ping, type DbOptions} from './create-db.js'
import {migrate, type MigrateOptions, type MigrateResult} from './migrate.js'
import {artifactsRepo} from './repositories/artifacts.js'
import {agentsRepo} from './repositories/agents.js'
import {agentEventsRepo} from './repositories/agent-events.js'
import {agentPortsRepo} from './repositories/agent-ports.js'
import {approvalsRepo} from './repositories/approvals.js'
import {brokersRepo} from './repositories/brokers.js'
import {credentialsRepo} from './repositories/credentials.js'
import {auditRepo, messagesRepo} from './repositories/messages.js'
import {hubSettingsRepo} from './repositories/hub-settings.js'
import {delegationAdoptionsRepo} from './repositories/delegation-adoptions.js'
import {delegationEdgesRepo} from './repositories/delegation-edges.js'
import {bulkPassRepo} from './repositories/bulk-pass.js'
import {settingsSectionsRepo} from './repositories/settings-sections.js'
import {projectSecretsRepo} from './repositories/project-secrets.js'
import {createStoreEvents, type StoreEvents} from './events.js'
import {sql} from 'kysely'
import {loginFlowsRepo} from './repositories/login-flows.js'
import {projectAnnotationsRepo} from './repositories/project-annotations.js'
import {projectsRepo} from './repositories/projects.js'
import {templatesRepo} from './repositories/templates.js'
import {usersRepo} from './repositories/users.js'
import {replicasRepo} from './repositories/replicas.js'
import type {Database} from './schema.js'
import {sqlitePassTransaction, type PassTransaction} from './pass-transaction.js'
import {statusTransaction, type StatusTransaction} from './status-transaction.js'

/** One bulk read: each row, as an array of values, is handed to `onRow` as it is read. */
export interface ArrayRead {
  text: string
  params?: readonly unknown[]
  /** Must not query: the read holds the connection. */
  onRow: (row: unknown[]) => void
}

/**
 * Bulk reads as arrays of values, where the database offers it cheaply (SQLite); else null.
 * Reads given together see one state of the database.
 */
export type ArrayReader = ((...reads: ArrayRead[]) => Promise<void>) | null

/** The store event channel that tells replicas new agent events were committed. */
export const AGENT_EVENTS_CHANNEL = 'svc_agent_events'

const repos = (db: Kysely<Database>, driver: 'sqlite' | 'postgres', arrays: ArrayReader = null, onAgentEvent?: () => void) => ({
  users: usersRepo(db),
  projects: projectsRepo(db),
  credentials: credentialsRepo(db),
  loginFlows: loginFlowsRepo(db),
  hubSettings: hubSettingsRepo(db),
  settingsSections: settingsSectionsRepo(db),
  projectSecrets: projectSecretsRepo(db),
  artifacts: artifactsRepo(db),
  brokers: brokersRepo(db),
  agents: agentsRepo(db, driver, arrays, onAgentEvent),
  agentEvents: agentEventsRepo(db),
  agentPorts: agentPortsRepo(db),
  approvals: approvalsRepo(db, onAgentEvent),
  templates: templatesRepo(db),
  messages: messagesRepo(db),
  projectAnnotations: projectAnnotationsRepo(db),
  audit: auditRepo(db),
  delegationEdges: delegationEdgesRepo(db),
  delegationAdoptions: delegationAdoptionsRepo(db, arrays),
  bulkPass: bulkPassRepo(db, driver),
  locks: locksRepo(db, driver),
  replicas: replicasRepo(db),
})

/**
 * Row locks that serialise check-then-write sequences (quota counts) inside a transaction.
 * PostgreSQL takes `FOR UPDATE` on the row; SQLite needs nothing because a write transaction
 * there already excludes every other writer.
 */
const locksRepo = (db: Kysely<Database>, driver: 'sqlite' | 'postgres') => ({
  async project(id: string): Promise<void> {
    if (driver === 'postgres') await db.selectFrom('projects').select('id').where('id', '=', id).forUpdate().execute()
  },
  /** Usage totals of an agent are read, summed and written back under this. */
  async agent(id: string): Promise<void> {
    if (driver === 'postgres') await db.selectFrom('agents').select('id').where('id', '=', id).forUpdate().execute()
  },
  async broker(id: string): Promise<void> {
    if (driver === 'postgres') await db.selectFrom('brokers').select('id').where('id', '=', id).forUpdate().execute()
  },
  /**
   * Serialises delegation adoption commits (the plan is recomputed and written under it) across
   * replicas: a transaction-scoped advisory lock, per schema, released at commit or rollback.
   */
  async delegationAdoption(): Promise<void> {
    if (driver === 'postgres') await sql`select pg_advisory_xact_lock(${0x5356_4302}, hashtext(current_schema()))`.execute(db)
  },
})

export type Repos = ReturnType<typeof repos>

/** The storage port: repositories, transactions, readiness and lifecycle. */
export interface Store extends Repos {
  /** Runs `fn` in one transaction; repositories on `tx` take part in it. */
  transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T>
  /**
   * One transaction of a long pass of small ones (the start-up adoption, one per hop), with
   * the few statements a hop runs: cheaper than `transaction` on SQLite, the same on PostgreSQL.
   */
  passTransaction: PassTransaction
  /** One transaction of the status writer's batches (status-transaction.ts). */
  statusTransaction: StatusTransaction
  ping(): Promise<void>
  migrate(opts?: MigrateOptions): Promise<MigrateResult>
  close(): Promise<void>
  readonly driver: 'sqlite' | 'postgres'
  /** Cross-replica notifications (PostgreSQL LISTEN/NOTIFY; in-process on SQLite). */
  readonly events: StoreEvents
}

export async function openStore(opts: DbOptions): Promise<Store> {
  const handle = await createDb(opts)
  const {db} = handle
  const raw = handle.readArrays
  // Outside a transaction the read takes the connection like any Kysely query, so it never
  // sees another flow's uncommitted writes; inside one, the transaction already holds it.
  const rootArrays: ArrayReader = raw ? (...reads) => db.connection().execute(async () => raw(reads)) : null
  const txArrays: ArrayReader = raw ? async (...reads) => raw(reads) : null
  let closed = false
  const events = await createStoreEvents(handle.driver, opts.url, async (channel, text) => {
    await sql`select pg_notify(${channel}, ${text})`.execute(db)
  })
  // Wakes every replica's agent event feed (agent_events) once the write is committed; the
  // feeds poll as a backstop, so a lost notification only delays an event.
  const wake = () => void events.publish(AGENT_EVENTS_CHANNEL, {}).catch(() => {})
  const transaction = async <T>(fn: (tx: Repos) => Promise<T>): Promise<T> => {
    let appended = false
    const out = await db.transaction().execute((trx) => fn(repos(trx, handle.driver, txArrays, () => (appended = true))))
    if (appended) wake()
    return out
  }
  return {
    ...repos(db, handle.driver, rootArrays, wake),
    driver: handle.driver,
    events,
    transaction,
    // A pass writes no agent events, so nothing is woken after its commits.
    passTransaction: handle.connection ? sqlitePassTransaction(db, handle.connection) : transaction,
    statusTransaction: statusTransaction(db, handle.connection, wake),
    ping: () => ping(db),
    migrate: (opts) => migrate(handle, opts),
    close: async () => {
      if (closed) return
      closed = true
      await events.close()
      await handle.close()
    },
  }
}
