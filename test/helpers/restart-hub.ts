import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import pino, {type Logger} from 'pino'
import {afterEach, beforeEach} from 'vitest'
import {openStore, type Store} from '../../src/store/store.js'
import {startTestHub, type Dialect, type TestHub, type TestHubOptions} from './hub.js'
import {createPgSchema} from './pg.js'

/**
 * A database that outlives the Hubs started on it, so a test can stop a Hub and start another
 * on the same data (a restart): a SQLite file in a temp directory, or a PostgreSQL schema.
 */
export interface HubDb {
  dialect: Dialect
  driver: 'sqlite' | 'postgres'
  url: string
  drop(): Promise<void>
}

export async function createHubDb(dialect: Dialect): Promise<HubDb> {
  if (dialect === 'postgres') {
    const s = await createPgSchema()
    return {dialect, driver: 'postgres', url: s.url, drop: s.drop}
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-db-'))
  return {dialect, driver: 'sqlite', url: join(dir, 'hub.db'), drop: async () => rmSync(dir, {recursive: true, force: true})}
}

/**
 * A store on the database without a Hub (to inspect or plan between starts), its schema brought
 * to the current release first as a Hub start would (the planner reads the current schema);
 * no start-up data migration runs.
 */
export async function openStoreOn(db: HubDb): Promise<Store> {
  const store = await openStore({driver: db.driver, url: db.url})
  await store.migrate()
  return store
}

/**
 * Starts a Hub on the database (each call is one start: migrations and start-up data
 * migrations run). `dispose` closes the Hub and its temp HOME and keeps the database.
 */
export async function startHubOn(db: HubDb, opts: TestHubOptions = {}): Promise<TestHub> {
  // startTestHub creates a schema only for 'postgres'; the driver and URL come from the env here.
  const hub = await startTestHub('sqlite', {...opts, env: {...opts.env, SVC_SERVER_DATABASE_DRIVER: db.driver, SVC_SERVER_DATABASE_URL: db.url}})
  return Object.assign(hub, {dialect: db.dialect})
}

/**
 * For a describe block: a fresh database before each test, dropped after it together with the
 * last Hub started on it. `start` is one Hub start (the previous Hub is stopped first).
 */
export function hubDbPerTest(dialect: Dialect) {
  let db: HubDb | null = null
  let hub: TestHub | null = null
  beforeEach(async () => {
    db = await createHubDb(dialect)
  })
  afterEach(async () => {
    await hub?.dispose()
    hub = null
    await db?.drop()
  })
  return {
    get db(): HubDb {
      return db!
    },
    get hub(): TestHub {
      return hub!
    },
    async start(opts: TestHubOptions = {}): Promise<TestHub> {
      await hub?.dispose()
      hub = await startHubOn(db!, opts)
      return hub
    },
  }
}

export interface CapturedLog {
  logger: Logger
  lines: Array<{level: number; msg: string; [k: string]: unknown}>
}

/** A logger that keeps every line it writes (to check start-up logs). */
export function capturingLogger(): CapturedLog {
  const lines: CapturedLog['lines'] = []
  const logger = pino({level: 'info'}, {write: (s: string) => void lines.push(JSON.parse(s))})
  return {logger, lines}
}
