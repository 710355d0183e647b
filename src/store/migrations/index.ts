import type {Migration} from 'kysely'
import * as m0001 from './0001-foundation.js'

/** Migrations in order; names sort lexically, so keep the four-digit prefix. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-foundation': m0001,
}
