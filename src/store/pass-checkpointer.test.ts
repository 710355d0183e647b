import Sqlite from 'better-sqlite3'
import {mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {passCheckpointer} from './pass-checkpointer.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

/** A WAL database as the store opens it, with one table to write small transactions into. */
function openDb() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ckpt-'))
  dirs.push(dir)
  const file = join(dir, 'x.db')
  const db = new Sqlite(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('wal_autocheckpoint = 777')
  db.exec('create table t (id integer primary key, v text)')
  return {db, file}
}

/** One small transaction, as a pass hop commits it. */
const hop = (db: Sqlite.Database, i: number) => db.transaction(() => db.prepare('insert into t (v) values (?)').run(`row ${i} ${'x'.repeat(200)}`))()

const walFrames = (file: string) => Math.max(0, (statSync(`${file}-wal`).size - 32) / (4096 + 24))

describe('a pass checkpointer (WAL checkpoints off the pass thread)', () => {
  it('checkpoints from its worker, restarts the WAL from the pass connection, and gives the checkpoints back at the end', async () => {
    const {db, file} = openDb()
    const c = passCheckpointer(db, {every: 5, restartEvery: 40})
    let i = 0
    // The worker answers between hops; the pass never waits for it.
    await expect
      .poll(async () => {
        for (let n = 0; n < 10; n++) {
          hop(db, i++)
          c.committed()
        }
        await new Promise((r) => setImmediate(r))
        const s = c.stats()
        return i >= 400 && s.checkpoints >= 2 && s.restarts >= 2
      })
      .toBe(true)
    // SQLite's own automatic checkpoints are off while the worker runs them.
    expect(db.pragma('wal_autocheckpoint', {simple: true})).toBe(0)
    // Restarts keep the WAL to about `restartEvery` hops of frames (a hop here writes two or more
    // pages: without restarts the WAL would hold 800 frames or more).
    expect(walFrames(file)).toBeLessThan(400)
    await c.end()
    expect(c.stats().state).toBe('off')
    expect(db.pragma('wal_autocheckpoint', {simple: true})).toBe(777)
    // Every hop is there, from another connection, and the file is sound.
    const other = new Sqlite(file, {readonly: true})
    expect(other.prepare('select count(*) from t').pluck().get()).toBe(i)
    expect(other.pragma('integrity_check', {simple: true})).toBe('ok')
    other.close()
    db.close()
  })

  it('a worker that cannot open the database gives the checkpoints back to SQLite', async () => {
    const {db} = openDb()
    const c = passCheckpointer(db, {every: 2, module: join(tmpdir(), 'no-such-better-sqlite3.js')})
    await expect
      .poll(async () => {
        hop(db, 0)
        c.committed()
        await new Promise((r) => setImmediate(r))
        return c.stats().state
      })
      .toBe('dead')
    expect(db.pragma('wal_autocheckpoint', {simple: true})).toBe(777)
    await c.end()
    db.close()
  })

  it('an in-memory database never starts a worker', async () => {
    const db = new Sqlite(':memory:')
    const c = passCheckpointer(db, {every: 1})
    c.committed()
    expect(c.stats().state).toBe('dead')
    await c.end()
    db.close()
  })
})
