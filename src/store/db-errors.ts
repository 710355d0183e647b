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

/**
 * Whether an error means the database cannot be reached right now (refused, cut, shutting down,
 * no connection within the pool's timeout), as opposed to a fault of the query or the data. The
 * Hub answers those 503 `not_ready` like `/readyz`: a load balancer or the CLI's replica
 * failover tries again or elsewhere, where a 500 would say the request itself broke.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false
  const e = err as {code?: unknown; message?: unknown; cause?: unknown}
  const code = typeof e.code === 'string' ? e.code : ''
  // PostgreSQL: class 08 (connection exception), shutting down or starting up (57P01-57P03).
  if (/^08[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03'].includes(code)) return true
  // The socket to the server: refused, reset, timed out, name or route gone.
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true
  const message = typeof e.message === 'string' ? e.message : ''
  // node-postgres's own words for a lost or never-made connection.
  if (/^Connection terminated|^timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated due to connection timeout/.test(message)) return true
  return e.cause !== undefined && e.cause !== err && isDatabaseUnreachable(e.cause)
}
