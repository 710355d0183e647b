import {createHash} from 'node:crypto'
import {Transform} from 'node:stream'
import type {BlobInfo} from './blob-store.js'

/** A pass-through that counts and hashes what flows through it. */
export function measuring(): {stream: Transform; result: () => BlobInfo} {
  const hash = createHash('sha256')
  let size = 0
  let digest: string | null = null
  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk)
      size += chunk.length
      cb(null, chunk)
    },
  })
  return {stream, result: () => ({size, sha256: (digest ??= hash.digest('hex'))})}
}
