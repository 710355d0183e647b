/** Reads a growing file: what is there, then (with follow) appended bytes until told to stop. */
import {open} from 'node:fs/promises'

export interface FollowOptions {
  follow: boolean
  signal?: AbortSignal
  /** Polled while following; when it answers false the rest of the file is read and the stream ends. */
  isAlive?: () => Promise<boolean>
  pollMs?: number
  /** How often isAlive is asked (it may run a process). */
  aliveEveryMs?: number
}

export async function* followFile(path: string, opts: FollowOptions): AsyncGenerator<Buffer> {
  const pollMs = opts.pollMs ?? 200
  const aliveEvery = opts.aliveEveryMs ?? 1000
  let pos = 0
  let lastAlive = 0
  let ending = false
  for (;;) {
    for await (const chunk of readFrom(path, pos)) {
      pos += chunk.length
      yield chunk
    }
    if (!opts.follow || opts.signal?.aborted || ending) return
    if (opts.isAlive && Date.now() - lastAlive >= aliveEvery) {
      lastAlive = Date.now()
      // One more read after the end is seen: the pipe may still be flushing the last output.
      if (!(await opts.isAlive())) ending = true
    }
    if (!(await sleep(pollMs, opts.signal))) return
  }
}

async function* readFrom(path: string, pos: number): AsyncGenerator<Buffer> {
  let fh
  try {
    fh = await open(path, 'r')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return
    throw new Error(`cannot read the log ${path}: ${(e as Error).message}`)
  }
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(64 * 1024)
      const {bytesRead} = await fh.read(buf, 0, buf.length, pos)
      if (bytesRead === 0) return
      pos += bytesRead
      yield buf.subarray(0, bytesRead)
    }
  } finally {
    await fh.close()
  }
}

/** Resolves true after `ms`, or false at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(t)
      resolve(false)
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, {once: true})
  })
}
