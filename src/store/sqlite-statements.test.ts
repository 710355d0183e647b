import Sqlite from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {withStatementCache} from './sqlite-statements.js'

describe('withStatementCache', () => {
  let connection: Sqlite.Database
  beforeEach(() => {
    connection = new Sqlite(':memory:')
    connection.exec('create table t (n integer)')
    connection.exec('insert into t values (1), (2), (3)')
  })
  afterEach(() => connection.open && connection.close())

  it('hands out the statement it prepared for the same text again', () => {
    const db = withStatementCache(connection)
    const a = db.prepare('select n from t')
    expect(db.prepare('select n from t')).toBe(a)
    expect(db.prepare('select n from t where n > ?')).not.toBe(a)
    expect(a.all([])).toEqual([{n: 1}, {n: 2}, {n: 3}])
  })

  it('never hands out a statement that is still iterating: that call gets a fresh one', () => {
    const db = withStatementCache(connection)
    const a = db.prepare('select n from t')
    const it = a.iterate([])
    it.next()
    const b = db.prepare('select n from t')
    expect(b).not.toBe(a)
    expect(b.all([])).toEqual([{n: 1}, {n: 2}, {n: 3}])
    it.return?.()
    expect(db.prepare('select n from t')).toBe(a)
  })

  it('keeps at most `max` statements, dropping the least recently used', () => {
    const db = withStatementCache(connection, 2)
    const one = db.prepare('select 1')
    const two = db.prepare('select 2')
    expect(db.prepare('select 1')).toBe(one)
    db.prepare('select 3')
    expect(db.prepare('select 1')).toBe(one)
    expect(db.prepare('select 2')).not.toBe(two)
  })

  it('a kept statement sees a column a later schema change adds', () => {
    const db = withStatementCache(connection)
    expect(db.prepare('select * from t').all([])[0]).toEqual({n: 1})
    connection.exec('alter table t add column m integer default 7')
    expect(db.prepare('select * from t').all([])[0]).toEqual({n: 1, m: 7})
  })

  it('close closes the connection', () => {
    withStatementCache(connection).close()
    expect(connection.open).toBe(false)
  })
})
