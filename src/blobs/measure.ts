import {createHash} from 'node:crypto'
import {Transform} from 'node:stream'
import type {BlobInfo, PutOptions} from './blob-store.js'

/** A pass-through that counts and hashes what flows through it (and fails past `limit`). */
export function measuring(limit?: PutOptions['limit']): {stream: Transform; result: () => BlobInfo} {
  const hash = createHash('sha256')
  let size = 0
  let digest: string | null = null
  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length
      if (limit && size > limit.bytes) return cb(limit.error())
      hash.update(chunk)
      cb(null, chunk)
    },
  })
  return {stream, result: () => ({size, sha256: (digest ??= hash.digest('hex'))})}
}
