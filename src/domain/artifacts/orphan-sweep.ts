import type {Logger} from 'pino'
import type {BlobStore} from '../../blobs/blob-store.js'
import type {Store} from '../../store/store.js'

/**
 * How long a blob with no file row is left alone, by storage kind. An artifact's blob is written
 * first and its row committed after (artifacts-service.ts), so a blob without a row may be an
 * upload about to commit. Local storage belongs to this one Hub, and nothing of it is in flight
 * while it starts. A bucket is shared by every replica of a hosted Hub: a recent object may be
 * another replica's upload. An upload cannot outlive the request timeout (2 min); an hour also
 * covers a clock difference between the Hub and the object store, whose write times are compared.
 */
export const ORPHAN_GRACE_MS: Record<BlobStore['kind'], number> = {local: 0, s3: 60 * 60 * 1000}

/**
 * At Hub start: removes temporary upload files (local storage: an upload cut by a crash or
 * kill -9 leaves its `.part` behind) and artifact blobs no file row references, older than the
 * storage's grace (written, then the process died before the row committed; or an artifact
 * deleted, then the process died before its blobs were). The listing is the store's own
 * (files or bucket objects); the decision is made here, the same for both.
 * Incomplete multipart uploads in a bucket are the bucket's lifecycle rule's to abort.
 */
export async function sweepStorageOrphans(store: Store, blobs: BlobStore, logger: Logger, now: Date): Promise<{temp: number; orphans: number}> {
  const temp = blobs.clearTemp ? await blobs.clearTemp() : 0
  const keys = await blobs.keys('artifacts', new Date(now.getTime() - ORPHAN_GRACE_MS[blobs.kind]))
  const referenced = await store.artifacts.referencedBlobKeys(keys)
  let orphans = 0
  for (const key of keys) {
    if (referenced.has(key)) continue
    await blobs.delete(key)
    orphans++
  }
  if (temp || orphans) logger.info({temp, orphans, storage: blobs.kind}, 'removed leftover upload files and unreferenced artifact blobs from storage')
  return {temp, orphans}
}
