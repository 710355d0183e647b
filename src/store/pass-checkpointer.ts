import type {Database as SqliteConnection} from 'better-sqlite3'
import {once} from 'node:events'
import {createRequire} from 'node:module'
import {MessageChannel, receiveMessageOnPort, Worker, type MessagePort} from 'node:worker_threads'

/**
 * WAL checkpoints of a long SQLite pass (the start-up adoption: 100k transactions of ~13 pages
 * each), run on a second connection in a worker thread instead of inside the pass's commits.
 *
 * Why: each checkpoint syncs the WAL and the database file. In the pass's thread SQLite runs it
 * inside the commit that crosses `wal_autocheckpoint`, and the pass waits for both syncs: about
 * 9 s of a 40 s pass of 100k hops on this machine (each sync waits for the file system's
 * journal, tens to hundreds of ms on a busy disk). In the worker the syncs overlap the pass's
 * next hops. Nothing about durability changes: the worker's checkpoints are SQLite's own
 * (PASSIVE, from its own connection, syncs as configured), only their thread differs; each hop
 * is still its own transaction, committed as before.
 *
 * A PASSIVE checkpoint never blocks the writer, but the WAL only starts over (the next write
 * from its beginning) when a transaction begins with every frame copied; the pass commits
 * continuously, so frames written during a background checkpoint remain. So every
 * `restartEvery` commits, once the worker is idle, the pass's own connection checkpoints the
 * rest (syncs included, on this thread) and the next transaction starts the WAL over: the
 * file grows to about `restartEvery` hops of frames (20k hops: ~1 GB), is truncated at the end
 * of the pass (bulk-pass.ts), and the pass waits for a few syncs instead of one pair per 25k pages.
 *
 * The pass runs as one chain of promises that never yields to the event loop (better-sqlite3 is
 * synchronous), so the worker's answers are read with `receiveMessageOnPort` after each commit.
 * Started lazily (`every` commits in: short passes never start a thread); not started for an
 * in-memory database or where better-sqlite3 cannot be resolved as a file (the single
 * executable); any failure of the worker gives the checkpoints back to SQLite
 * (`wal_autocheckpoint` restored), as does `end`.
 */
export interface PassCheckpointOptions {
  /** Commits between background checkpoints. */
  every?: number
  /** Commits between WAL restarts (a checkpoint on the pass's connection). */
  restartEvery?: number
  /** Commits a worker may stay silent (starting or checkpointing) before it is given up. */
  patience?: number
  /** better-sqlite3's main file for the worker (tests: a path that fails). */
  module?: string
}

const WORKER = `
const {workerData} = require('node:worker_threads')
const {port, module, file} = workerData
let db = null
try {
  db = new (require(module))(file, {fileMustExist: true})
  db.pragma('busy_timeout = 5000')
  port.postMessage({ready: true})
} catch (err) {
  port.postMessage({failed: String(err && err.message)})
  port.close()
}
if (db) port.on('message', (m) => {
  if (m === 'close') {
    db.close()
    port.close()
    return
  }
  try {
    port.postMessage({done: db.pragma('wal_checkpoint(PASSIVE)')[0]})
  } catch (err) {
    port.postMessage({error: String(err && err.message)})
  }
})
`

type State = 'off' | 'starting' | 'idle' | 'busy' | 'dead'

export interface PassCheckpointer {
  /** After each committed transaction of the pass. */
  committed(): void
  /** Stops the worker and gives the checkpoints back to SQLite; a later pass may start again. */
  end(): Promise<void>
  /** Background checkpoints done and WAL restarts, for tests and benches. */
  stats(): {state: State; checkpoints: number; restarts: number}
}

function betterSqliteModule(): string | null {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3')
  } catch {
    return null // the single executable: no module file to load in a worker
  }
}

export function passCheckpointer(connection: SqliteConnection, opts: PassCheckpointOptions = {}): PassCheckpointer {
  const every = opts.every ?? 2000
  const restartEvery = opts.restartEvery ?? 20_000
  const patience = opts.patience ?? 20_000
  let state: State = 'off'
  let worker: Worker | null = null
  let exited: Promise<unknown> = Promise.resolve()
  let port: MessagePort | null = null
  let saved: number | null = null
  let commits = 0
  let sinceCheckpoint = 0
  let sinceRestart = 0
  let silent = 0
  let checkpoints = 0
  let restarts = 0

  const restore = () => {
    if (saved !== null && connection.open) connection.pragma(`wal_autocheckpoint = ${saved}`)
    saved = null
  }
  const stop = async () => {
    const w = worker
    const p = port
    worker = port = null
    if (!w || !p) return
    // The worker closes its connection and exits; one that hangs is stopped.
    p.postMessage('close')
    const timer = setTimeout(() => void w.terminate(), 5000)
    await exited
    clearTimeout(timer)
    p.close()
  }
  const die = () => {
    state = 'dead'
    restore()
    void stop()
  }
  const start = () => {
    const module = opts.module ?? betterSqliteModule()
    if (!module || connection.memory || !connection.name) {
      state = 'dead'
      return
    }
    const channel = new MessageChannel()
    port = channel.port1
    worker = new Worker(WORKER, {eval: true, workerData: {port: channel.port2, module, file: connection.name}, transferList: [channel.port2]})
    worker.unref()
    port.unref()
    exited = once(worker, 'exit').catch(() => {})
    // Delivered only when the event loop runs (after the pass): the checkpoints go back to SQLite.
    worker.on('error', () => {
      if (state !== 'off') die()
    })
    state = 'starting'
  }
  const answer = (m: {ready?: true; failed?: string; done?: unknown; error?: string}) => {
    if (m.ready) {
      saved = Number(connection.pragma('wal_autocheckpoint', {simple: true}))
      connection.pragma('wal_autocheckpoint = 0')
      state = 'idle'
    } else if (m.done !== undefined) {
      checkpoints++
      state = 'idle'
    } else die()
    silent = 0
  }
  const checkpointHere = () => {
    try {
      connection.pragma('wal_checkpoint(PASSIVE)')
      restarts++
    } catch {
      // Best effort: SQLite checkpoints again later (the next restart, or the pass's end).
    }
  }

  return {
    committed() {
      if (state === 'dead') return
      commits++
      sinceCheckpoint++
      sinceRestart++
      if (state === 'off') {
        if (commits >= every) start()
        return
      }
      for (let m; port && (m = receiveMessageOnPort(port)); ) answer(m.message as Parameters<typeof answer>[0])
      if (state === 'starting' || state === 'busy') {
        if (++silent > patience) die()
        return
      }
      if (state !== 'idle' || connection.inTransaction) return
      if (sinceRestart >= restartEvery) {
        checkpointHere()
        sinceRestart = 0
        sinceCheckpoint = 0
      } else if (sinceCheckpoint >= every) {
        sinceCheckpoint = 0
        state = 'busy'
        port?.postMessage('checkpoint')
      }
    },
    async end() {
      const was = state
      state = 'off'
      commits = sinceCheckpoint = sinceRestart = silent = 0
      if (was === 'off') return
      restore()
      await stop()
    },
    stats: () => ({state, checkpoints, restarts}),
  }
}
