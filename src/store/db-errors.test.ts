import {createServer} from 'node:net'
import {sql} from 'kysely'
import {describe, expect, it} from 'vitest'
import {createDb} from './create-db.js'
import {isDatabaseUnreachable} from './db-errors.js'

const listen = async (server: ReturnType<typeof createServer>) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return (server.address() as {port: number}).port
}

/** The error of a query through the store's own PostgreSQL handle at `port`. */
async function queryError(port: number): Promise<unknown> {
  const h = await createDb({driver: 'postgres', url: `postgres://x@127.0.0.1:${port}/x`})
  try {
    return await sql`select 1`.execute(h.db).then(() => null, (e: unknown) => e)
  } finally {
    await h.close().catch(() => {})
  }
}

describe('isDatabaseUnreachable', () => {
  it('a connection the store could not open (refused, or cut during its opening) is unreachable', async () => {
    const closed = createServer()
    const port = await listen(closed)
    await new Promise<void>((r) => closed.close(() => r()))
    const refused = await queryError(port)
    expect(refused).toBeInstanceOf(Error)
    expect(isDatabaseUnreachable(refused)).toBe(true)
    // A server that accepts, then closes the socket before the handshake ends.
    const cutter = createServer((s) => s.destroy())
    const cut = await queryError(await listen(cutter))
    cutter.close()
    expect(cut).toBeInstanceOf(Error)
    expect(isDatabaseUnreachable(cut)).toBe(true)
  })

  it('a network error of anything but the store is not: a refused fetch stays a fault of its own', async () => {
    const closed = createServer()
    const port = await listen(closed)
    await new Promise<void>((r) => closed.close(() => r()))
    const fetched = await fetch(`http://127.0.0.1:${port}/`).then(() => null, (e: unknown) => e)
    expect(fetched).toBeInstanceOf(Error)
    expect(isDatabaseUnreachable(fetched)).toBe(false)
    expect(isDatabaseUnreachable(Object.assign(new Error('x'), {code: 'ECONNREFUSED'}))).toBe(false)
  })

  it('PostgreSQL refusing a connection is unreachable; a statement cut short, query and data faults are not', () => {
    for (const code of ['08001', '08004', '57P03', '53300']) expect(isDatabaseUnreachable(Object.assign(new Error('x'), {code}))).toBe(true)
    for (const code of ['57P01', '08006', '23505', '42P01', '40001', 'SQLITE_CONSTRAINT']) expect(isDatabaseUnreachable(Object.assign(new Error('x'), {code}))).toBe(false)
    expect(isDatabaseUnreachable(new Error('Connection terminated unexpectedly'))).toBe(false)
    expect(isDatabaseUnreachable(null)).toBe(false)
    expect(isDatabaseUnreachable('ECONNREFUSED')).toBe(false)
  })
})
