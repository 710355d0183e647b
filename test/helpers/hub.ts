import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import pino, {type Logger} from 'pino'
import {describe} from 'vitest'
import {resolveBootstrap, type StartFlags} from '../../src/config/bootstrap.js'
import {createHub, type Hub, type HubOptions} from '../../src/main.js'
import type {Clock} from '../../src/domain/shared/clock.js'
import {createMigratedPgDatabase, pgAvailable} from './pg.js'

export type Dialect = 'sqlite' | 'postgres'
export const DIALECTS: Dialect[] = ['sqlite', 'postgres']

export interface TestHub extends Hub {
  home: string
  env: NodeJS.ProcessEnv
  dialect: Dialect
  /** The dev credential (workstation Hubs). */
  devToken: string
  /** `app.inject` with a bearer token and JSON body. */
  request(method: string, url: string, opts?: {token?: string | null; body?: unknown; headers?: Record<string, string>}): Promise<{status: number; body: any; headers: Record<string, unknown>}>
  dispose(): Promise<void>
}

export interface TestHubOptions {
  flags?: StartFlags
  env?: Record<string, string>
  clock?: Clock
  /** Files to write into the temp HOME before start, e.g. {'.svc/settings.yaml': '...'}. */
  files?: Record<string, string>
  /** The Hub's logger (default: silent, or SVC_TEST_LOG's level). */
  logger?: Logger
  /** Start-up failure injection passed to createHub (delegation start-up tests). */
  delegationStartup?: HubOptions['delegationStartup']
  /** HTTP timeouts and caps of the app (short ones in tests of those limits). */
  limits?: HubOptions['limits']
}

/**
 * Builds a real Hub (real database, real migrations, the real app) in a temp HOME, on SQLite or
 * on a fresh PostgreSQL schema. It does not listen; use `request` (inject) or `app.listen`.
 */
export async function startTestHub(dialect: Dialect, opts: TestHubOptions = {}): Promise<TestHub> {
  const home = mkdtempSync(join(tmpdir(), 'svc-test-'))
  const {mkdirSync, writeFileSync} = await import('node:fs')
  for (const [rel, text] of Object.entries(opts.files ?? {})) {
    mkdirSync(join(home, rel, '..'), {recursive: true})
    writeFileSync(join(home, rel), text)
  }
  let dropSchema: (() => Promise<void>) | null = null
  const env: NodeJS.ProcessEnv = {HOME: home, ...opts.env}
  if (dialect === 'postgres') {
    // Already migrated: the Hub's start-up pass finds nothing to apply (migrations have tests of
    // their own), which saves most of a second per PostgreSQL Hub.
    const s = await createMigratedPgDatabase()
    dropSchema = s.drop
    env.SVC_SERVER_DATABASE_DRIVER = 'postgres'
    env.SVC_SERVER_DATABASE_URL = s.url
  }
  const logger = opts.logger ?? pino({level: process.env.SVC_TEST_LOG ?? 'silent'})
  let hub: Awaited<ReturnType<typeof createHub>>
  try {
    const bootstrap = resolveBootstrap({port: 0, ...opts.flags}, env)
    hub = await createHub(bootstrap, {env, logger, clock: opts.clock, delegationStartup: opts.delegationStartup, limits: opts.limits})
  } catch (err) {
    // A test expecting the Hub to refuse its configuration gets no dispose(): its database goes here.
    if (dropSchema) await dropSchema().catch(() => {})
    rmSync(home, {recursive: true, force: true})
    throw err
  }
  const request: TestHub['request'] = async (method, url, o = {}) => {
    const token = o.token === undefined ? hub.config.devToken : o.token
    const res = await hub.app.inject({
      method: method as 'GET',
      url,
      headers: {...(token && {authorization: `Bearer ${token}`}), ...o.headers},
      ...(o.body !== undefined && {payload: o.body as object}),
    })
    let body: unknown = res.body
    try {
      body = res.json()
    } catch {
      // not JSON
    }
    return {status: res.statusCode, body, headers: res.headers}
  }
  return {
    ...hub,
    home,
    env,
    dialect,
    devToken: hub.config.devToken ?? '',
    request,
    dispose: async () => {
      await hub.close()
      if (dropSchema) await dropSchema()
      rmSync(home, {recursive: true, force: true})
    },
  }
}

const pgOk = await pgAvailable()

/**
 * Runs a describe block once per database. The PostgreSQL block is skipped, with its name
 * saying why, when no server answers outside CI; in CI global setup has already failed the run.
 */
export function describeEachDialect(name: string, fn: (dialect: Dialect) => void) {
  describe(`${name} [sqlite]`, () => fn('sqlite'))
  describe.skipIf(!pgOk)(`${name} [postgres]${pgOk ? '' : ' (SKIPPED: no PostgreSQL)'}`, () => fn('postgres'))
}

export {pgAvailable}
