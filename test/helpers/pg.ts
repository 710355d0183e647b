import {randomBytes} from 'node:crypto'
import pg from 'pg'

export const pgUrl = () => process.env.SVC_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test'

let availability: Promise<boolean> | null = null

/** True when the test PostgreSQL server answers. */
export function pgAvailable(): Promise<boolean> {
  availability ??= (async () => {
    const client = new pg.Client({connectionString: pgUrl(), connectionTimeoutMillis: 3000})
    try {
      await client.connect()
      await client.query('select 1')
      return true
    } catch {
      return false
    } finally {
      await client.end().catch(() => {})
    }
  })()
  return availability
}

/**
 * A fresh schema for one test run; the returned URL selects it through `search_path`, so the
 * Hub under test needs no special option. `drop()` removes it.
 */
export async function createPgSchema(): Promise<{url: string; schema: string; drop: () => Promise<void>}> {
  const schema = 't_' + randomBytes(6).toString('hex')
  const admin = new pg.Client({connectionString: pgUrl()})
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const u = new URL(pgUrl())
  u.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: u.toString(),
    schema,
    drop: async () => {
      const c = new pg.Client({connectionString: pgUrl()})
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
    },
  }
}
