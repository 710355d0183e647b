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
