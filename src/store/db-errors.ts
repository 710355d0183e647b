import {AppError} from '../api/app-error.js'

/**
 * Driver errors are translated here and only here: SQLite (better-sqlite3 `code`) and PostgreSQL
 * (`pg` SQLSTATE). Nothing above the store sees a driver error.
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as {code?: string})?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505'
}

export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as {code?: string})?.code
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503'
}

/** Rethrows a driver error as a domain error when it has a domain meaning. */
export function translateDbError(err: unknown, what = 'record'): never {
  if (err instanceof AppError) throw err
  if (isUniqueViolation(err)) throw new AppError('conflict', `${what} already exists`)
  if (isForeignKeyViolation(err)) throw new AppError('conflict', `${what} refers to something that does not exist`)
  throw err
}

/** Marks an error of opening a database connection (store/create-db.ts tags the pool's). */
const UNREACHABLE = Symbol('svc.databaseUnreachable')

/** Tags an error raised while opening a connection: no statement of the request ran on it. */
export function markUnreachable(err: unknown): unknown {
  if (err && typeof err === 'object') (err as Record<symbol, boolean>)[UNREACHABLE] = true
  return err
}

/**
 * Whether an error means the database could not be reached: a connection could not be opened
 * (refused, no answer within the pool's timeout: tagged where the store opens connections), or
 * PostgreSQL refused the connection itself (08001, 08004, 57P03 starting up, 53300 too many
 * connections). Nothing of the statement that wanted it ran, so the Hub answers 503 `not_ready`
 * like `/readyz`. A connection lost in the middle of a statement is not one of these (a write
 * may have landed), and neither is a network error of anything else the Hub calls.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false
  if ((err as Record<symbol, unknown>)[UNREACHABLE] === true) return true
  const code = (err as {code?: unknown}).code
  return typeof code === 'string' && ['08001', '08004', '57P03', '53300'].includes(code)
}
