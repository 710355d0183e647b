import {createHash} from 'node:crypto'
import {createWriteStream} from 'node:fs'
import {addAbortSignal, finished, type Readable} from 'node:stream'
import type {BlobInfo, PutOptions} from './blob-store.js'

/**
 * Writing an upload to disk while hashing it, on the event loop, as a bare node:http server does.
 *
 * Until issue 31 the hashing ran in a worker thread (each received chunk copied into 1 MiB
 * blocks handed over to it, acknowledged back, at most 4 MiB in flight), so receiving and
 * hashing would overlap. On this 2-core machine with other work beside it, that handoff cost
 * more than it saved: a 32 MiB publish took 1.12-1.59x the time of a node:http server hashing
 * and writing inline (docs/benchmarks.md, "Artifacts"), and 0.97-1.03x once inline. SHA-256 of
 * 32 MiB is ~35 ms of the event loop at idle, spread over the upload's chunks.
 */

/** Bytes the file stream buffers before reading from the body pauses (and per writev). */
const HIGH_WATER = 1024 * 1024

/**
 * Streams `body` into the new file `file` (created exclusively, mode 0600), hashing each chunk
 * as it arrives on the event loop, and returns its size and SHA-256. No copy of the bytes: each
 * received chunk is hashed and handed to the file stream as it is; reading pauses only when the
 * file stream is HIGH_WATER behind (its writes are batched, one writev per flush). On failure
 * (the body errs or ends early, `signal` aborts, `limit` is exceeded, a write fails) the promise
 * rejects once the file is closed, so the caller can remove it. The body is not destroyed when
 * the limit stops reading, so the Hub can still answer 413 on it.
 */
export function writeHashed(body: Readable, file: string, opts: {signal?: AbortSignal; limit?: PutOptions['limit']} = {}): Promise<BlobInfo> {
  const {signal, limit} = opts
  signal?.throwIfAborted()
  if (signal) addAbortSignal(signal, body)
  return new Promise<BlobInfo>((resolve, reject) => {
    const hash = createHash('sha256')
    const out = createWriteStream(file, {flags: 'wx', mode: 0o600, highWaterMark: HIGH_WATER})
    let total = 0
    let settled = false
    const closed = new Promise<void>((r) => out.once('close', () => r()))
    const fail = (err: Error) => {
      if (settled) return
      settled = true
      body.off('data', onData)
      stopWatching()
      // Reading stops; the body itself is left to its owner (see above).
      body.pause()
      out.destroy()
      void closed.then(() => reject(err))
    }
    const resume = () => {
      if (!settled) body.resume()
    }
    const onData = (chunk: Buffer) => {
      total += chunk.length
      if (limit && total > limit.bytes) return fail(limit.error())
      hash.update(chunk)
      if (!out.write(chunk)) {
        body.pause()
        out.once('drain', resume)
      }
    }
    out.on('error', fail)
    const stopWatching = finished(body, {writable: false}, (err) => {
      if (settled) return
      if (err) return fail(err)
      body.off('data', onData)
      out.end((e?: Error | null) => {
        if (e) return fail(e)
        if (settled) return
        settled = true
        void closed.then(() => resolve({size: total, sha256: hash.digest('hex')}))
      })
    })
    body.on('data', onData)
  })
}
