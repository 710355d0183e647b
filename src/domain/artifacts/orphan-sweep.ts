import type {Logger} from 'pino'
import type {BlobStore} from '../../blobs/blob-store.js'
import type {Store} from '../../store/store.js'

/**
 * At Hub start, on local storage: removes temporary upload files (an upload cut by a crash or
 * kill -9 leaves its `.part` behind) and artifact blobs no file row references (written, then
 * the process died before the row committed). The local store belongs to this one Hub, so
 * nothing else can have an upload in flight while it starts. Object storage is left alone: its
 * abandoned uploads are removed by the store's own retries (s3-store.ts).
 */
export async function sweepStorageOrphans(store: Store, blobs: BlobStore, logger: Logger): Promise<{temp: number; orphans: number}> {
  if (!blobs.clearTemp || !blobs.keys) return {temp: 0, orphans: 0}
  const temp = await blobs.clearTemp()
  const keys = await blobs.keys('artifacts')
  const referenced = await store.artifacts.referencedBlobKeys(keys)
  let orphans = 0
  for (const key of keys) {
    if (referenced.has(key)) continue
    await blobs.delete(key)
    orphans++
  }
  if (temp || orphans) logger.info({temp, orphans}, 'removed leftover upload files and unreferenced artifact blobs from storage')
  return {temp, orphans}
}
