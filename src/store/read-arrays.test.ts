import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import Sqlite from 'better-sqlite3'
import {sql} from 'kysely'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createDb, type DbHandle} from './create-db.js'

/** SQLite bulk reads (`readArrays`): value arrays row by row, several reads in one snapshot. */
describe('readArrays (SQLite)', () => {
  let dir: string
  let handle: DbHandle
  let other: Sqlite.Database
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-read-arrays-'))
    handle = await createDb({driver: 'sqlite', url: join(dir, 'db.sqlite')})
    await sql`create table a (n integer)`.execute(handle.db)
    await sql`create table b (n integer)`.execute(handle.db)
    await sql`insert into a values (1), (2)`.execute(handle.db)
    await sql`insert into b values (10)`.execute(handle.db)
    // Another connection to the same file, as another process would write.
    other = new Sqlite(join(dir, 'db.sqlite'))
  })
  afterEach(async () => {
    other.close()
    await handle.close()
    rmSync(dir, {recursive: true, force: true})
  })

  const read = (text: string, rows: unknown[][], onRow?: (r: unknown[]) => void) => ({text, onRow: (r: unknown[]) => (rows.push(r), onRow?.(r))})

  it('hands each row over as an array of values, with parameters', () => {
    const rows: unknown[][] = []
    handle.readArrays!([{...read('select n, n * 2 from a where n >= ? order by n', rows), params: [1]}])
    expect(rows).toEqual([
      [1, 2],
      [2, 4],
    ])
  })

  it('reads given together see one state: a write landing between them is not seen', () => {
    const a: unknown[][] = []
    const b: unknown[][] = []
    let wrote = false
    const writeOnce = () => {
      if (!wrote) other.prepare('insert into b values (11)').run()
      wrote = true
    }
    handle.readArrays!([read('select n from a order by n', a, writeOnce), read('select n from b order by n', b)])
    expect(wrote).toBe(true)
    expect(b).toEqual([[10]])
    // A later read sees the write.
    const after: unknown[][] = []
    handle.readArrays!([read('select n from b order by n', after)])
    expect(after).toEqual([[10], [11]])
  })

  it('inside a transaction the reads see its own writes', async () => {
    await handle.db.transaction().execute(async (tx) => {
      await sql`insert into b values (12)`.execute(tx)
      const a: unknown[][] = []
      const b: unknown[][] = []
      handle.readArrays!([read('select n from a', a), read('select n from b order by n', b)])
      expect(b).toEqual([[10], [12]])
    })
  })
})
