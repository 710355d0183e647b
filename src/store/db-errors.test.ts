import {createServer} from 'node:net'
import pg from 'pg'
import {describe, expect, it} from 'vitest'
import {isDatabaseUnreachable} from './db-errors.js'

describe('isDatabaseUnreachable', () => {
  it('a refused connection and a connection the server cuts are unreachable', async () => {
    // A port nothing listens on: the real ECONNREFUSED of node-postgres.
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as {port: number}).port
    await new Promise<void>((r) => closed.close(() => r()))
    const refused = await new pg.Pool({host: '127.0.0.1', port, user: 'x', connectionTimeoutMillis: 2000}).query('select 1').catch((e: unknown) => e)
    expect(isDatabaseUnreachable(refused)).toBe(true)
    // A server that accepts, then closes the socket: node-postgres's "Connection terminated".
    const cutter = createServer((s) => s.destroy())
    await new Promise<void>((r) => cutter.listen(0, '127.0.0.1', r))
    const cut = await new pg.Pool({host: '127.0.0.1', port: (cutter.address() as {port: number}).port, user: 'x', connectionTimeoutMillis: 2000}).query('select 1').catch((e: unknown) => e)
    cutter.close()
    expect(cut).toBeInstanceOf(Error)
    expect(isDatabaseUnreachable(cut)).toBe(true)
  })

  it('PostgreSQL connection-class and shutdown codes are unreachable; query and data faults are not', () => {
    for (const code of ['08006', '08001', '57P01', '57P03']) expect(isDatabaseUnreachable(Object.assign(new Error('x'), {code}))).toBe(true)
    for (const code of ['23505', '42P01', '40001', 'SQLITE_CONSTRAINT']) expect(isDatabaseUnreachable(Object.assign(new Error('x'), {code}))).toBe(false)
    expect(isDatabaseUnreachable(new Error('boom'))).toBe(false)
    expect(isDatabaseUnreachable(new Error('wrapped', {cause: Object.assign(new Error('x'), {code: 'ECONNRESET'})}))).toBe(true)
    expect(isDatabaseUnreachable(null)).toBe(false)
    expect(isDatabaseUnreachable('ECONNREFUSED')).toBe(false)
  })
})
