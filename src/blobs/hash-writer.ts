import {availableParallelism} from 'node:os'
import {addAbortSignal, finished, type Readable} from 'node:stream'
import {Worker} from 'node:worker_threads'
import type {BlobInfo, PutOptions} from './blob-store.js'

/**
 * Writing an upload to disk while hashing it, with the hashing off the event loop.
 *
 * SHA-256 runs at about 1 GB/s per core, as fast as loopback TCP delivers the bytes: on the
 * event loop it doubles the time of an upload (receive, then hash, chunk after chunk). Here the
 * event loop only copies the received bytes into 1 MiB blocks and hands them over (transferred,
 * not cloned) to a worker thread, which hashes each block and writes it to the file, so
 * receiving and hashing overlap. At most IN_FLIGHT bytes wait for the worker; beyond that the
 * body is paused, so memory stays the same whatever the file size.
 */

/** Bytes handed to the worker per message (and per write system call). */
const BLOCK = 1024 * 1024
/** Bytes the worker may be behind before reading from the body pauses. */
const IN_FLIGHT = 4 * BLOCK

// Plain CommonJS, evaluated in the worker: no file to locate next to the bundle or the binary.
const WORKER_SOURCE = `
const {parentPort} = require('node:worker_threads')
const {createHash} = require('node:crypto')
const fs = require('node:fs')
const jobs = new Map()
const fail = (id, err) => {
  const job = jobs.get(id)
  jobs.delete(id)
  if (job && job.fd !== null) try { fs.closeSync(job.fd) } catch {}
  parentPort.postMessage({id, error: {message: String(err && err.message), code: err && err.code}})
}
parentPort.on('message', (m) => {
  try {
    if (m.op === 'open') {
      jobs.set(m.id, {fd: null, hash: createHash('sha256'), size: 0})
      jobs.get(m.id).fd = fs.openSync(m.file, 'wx', 0o600)
    } else if (m.op === 'data') {
      const job = jobs.get(m.id)
      if (!job) return
      const b = new Uint8Array(m.block, 0, m.length)
      job.hash.update(b)
      for (let off = 0; off < b.length; ) off += fs.writeSync(job.fd, b, off, b.length - off)
      job.size += b.length
      // The block goes back to be filled again: no allocation per megabyte on either side.
      parentPort.postMessage({id: m.id, ack: b.length, block: m.block}, [m.block])
    } else if (m.op === 'end') {
      const job = jobs.get(m.id)
      if (!job) return
      jobs.delete(m.id)
      fs.closeSync(job.fd)
      parentPort.postMessage({id: m.id, done: {size: job.size, sha256: job.hash.digest('hex')}})
    } else if (m.op === 'abort') {
      const job = jobs.get(m.id)
      jobs.delete(m.id)
      if (job && job.fd !== null) fs.closeSync(job.fd)
      parentPort.postMessage({id: m.id, aborted: true})
    }
  } catch (err) {
    fail(m.id, err)
  }
})
`

/** What the worker reports: progress, then exactly one of done, error or aborted. */
interface Reply {
  id: number
  ack?: number
  /** The block acknowledged, handed back for reuse. */
  block?: ArrayBuffer
  done?: BlobInfo
  error?: {message: string; code?: string}
  aborted?: true
}

interface PoolWorker {
  worker: Worker
  jobs: Map<number, (m: Reply) => void>
}

const pool: PoolWorker[] = []
const POOL_MAX = Math.max(1, Math.min(4, availableParallelism()))
let nextId = 0

function spawnWorker(): PoolWorker {
  const worker = new Worker(WORKER_SOURCE, {eval: true})
  const pw: PoolWorker = {worker, jobs: new Map()}
  worker.on('message', (m: Reply) => {
    pw.jobs.get(m.id)?.(m)
    if (m.ack === undefined) release(pw, m.id)
  })
  const lost = (err: Error) => {
    const i = pool.indexOf(pw)
    if (i >= 0) pool.splice(i, 1)
    for (const [id, on] of pw.jobs) on({id, error: {message: err.message}})
    pw.jobs.clear()
  }
  worker.on('error', lost)
  worker.on('exit', (code) => lost(new Error(`the hashing worker exited (code ${code})`)))
  // An idle worker never keeps the process alive; one with a job does (see track/release).
  // After the listeners: adding a 'message' listener refs the worker again.
  worker.unref()
  pool.push(pw)
  return pw
}

/** The worker's error as an Error, with its `code` (EEXIST, ENOSPC...) when it had one. */
const errorOf = (e: {message: string; code?: string}): Error => Object.assign(new Error(e.message), e.code ? {code: e.code} : {})

function track(pw: PoolWorker, id: number, on: (m: Reply) => void) {
  if (pw.jobs.size === 0) pw.worker.ref()
  pw.jobs.set(id, on)
}

function release(pw: PoolWorker, id: number) {
  if (pw.jobs.delete(id) && pw.jobs.size === 0) pw.worker.unref()
}

/** The least busy worker; a new one while every worker has an upload and the pool has room. */
function pickWorker(): PoolWorker {
  const idle = pool.reduce<PoolWorker | null>((best, w) => (!best || w.jobs.size < best.jobs.size ? w : best), null)
  if (idle && (idle.jobs.size === 0 || pool.length >= POOL_MAX)) return idle
  return spawnWorker()
}

/**
 * Streams `body` into the new file `file` (created exclusively, mode 0600) and returns its size
 * and SHA-256. On failure (the body errs or ends early, `signal` aborts, `limit` is exceeded, a
 * write fails) the promise rejects once the worker has let go of the file, so the caller can
 * remove it. The body is read with 'data' events, not an async iterator or a Transform (a
 * promise or a stream hop per 64 KiB chunk cost as much as the copy), and is not destroyed when
 * the limit stops reading, so the Hub can still answer 413 on it.
 */
export function writeHashed(body: Readable, file: string, opts: {signal?: AbortSignal; limit?: PutOptions['limit']} = {}): Promise<BlobInfo> {
  const {signal, limit} = opts
  signal?.throwIfAborted()
  if (signal) addAbortSignal(signal, body)
  const pw = pickWorker()
  const id = ++nextId
  let behind = 0
  let total = 0
  const spare: Uint8Array<ArrayBuffer>[] = []
  let block: Uint8Array<ArrayBuffer> = new Uint8Array(BLOCK)
  let fill = 0

  return new Promise<BlobInfo>((resolve, reject) => {
    let settled = false
    const final = new Promise<Reply>((done) => {
      track(pw, id, (m) => {
        if (m.ack !== undefined) {
          behind -= m.ack
          if (m.block) spare.push(new Uint8Array(m.block))
          if (behind < IN_FLIGHT && body.isPaused() && !settled) body.resume()
          return
        }
        done(m)
        if (m.error) fail(errorOf(m.error))
      })
    })
    const stop = () => {
      settled = true
      body.off('data', onData)
      cleanup()
    }
    const fail = (err: Error) => {
      if (settled) return
      stop()
      // Reading stops; the body itself is left to its owner (see above).
      body.pause()
      if (pw.jobs.has(id)) pw.worker.postMessage({op: 'abort', id})
      void final.then(() => reject(err))
    }
    const send = () => {
      behind += fill
      pw.worker.postMessage({op: 'data', id, block: block.buffer, length: fill}, [block.buffer])
      block = spare.pop() ?? new Uint8Array(BLOCK)
      fill = 0
    }
    const onData = (chunk: Buffer) => {
      total += chunk.length
      if (limit && total > limit.bytes) return fail(limit.error())
      for (let off = 0; off < chunk.length; ) {
        const n = Math.min(chunk.length - off, BLOCK - fill)
        block.set(chunk.subarray(off, off + n), fill)
        fill += n
        off += n
        if (fill === BLOCK) send()
      }
      // Backpressure: read on once the worker has caught up (see the ack above).
      if (behind >= IN_FLIGHT) body.pause()
    }
    const cleanup = finished(body, {writable: false}, (err) => {
      if (settled) return
      if (err) return fail(err)
      stop()
      if (fill) send()
      pw.worker.postMessage({op: 'end', id})
      void final.then((m) => (m.done ? resolve(m.done) : reject(errorOf(m.error ?? {message: 'the upload was not stored'}))))
    })
    pw.worker.postMessage({op: 'open', id, file})
    body.on('data', onData)
  })
}
