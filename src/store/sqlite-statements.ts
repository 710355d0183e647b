import type {Database as SqliteConnection, Statement} from 'better-sqlite3'
import type {SqliteDatabase} from 'kysely'

/**
 * The better-sqlite3 connection as Kysely sees it, with prepared statements kept. Kysely
 * prepares every query anew, and preparing was a seventh of the start-up adoption's time (20k
 * hops, eight queries each). Statements are kept per SQL text, the least recently used dropped
 * past `max` (texts with `in (?, ?, …)` lists vary); one still iterating (`busy`) is never handed
 * out twice: a fresh one is prepared for that call instead.
 */
export function withStatementCache(connection: SqliteConnection, max = 500): SqliteDatabase {
  const kept = new Map<string, Statement>()
  return {
    close: () => connection.close(),
    prepare(sql: string) {
      const hit = kept.get(sql)
      if (hit && !hit.busy) {
        // Re-inserted: Map order is recency order.
        kept.delete(sql)
        kept.set(sql, hit)
        return hit
      }
      const st = connection.prepare(sql)
      if (!hit) {
        kept.set(sql, st)
        if (kept.size > max) kept.delete(kept.keys().next().value as string)
      }
      return st
    },
  }
}
