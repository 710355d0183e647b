import {createLocalBlobStore} from './local-store.js'
import type {BlobStore} from './blob-store.js'

export type {BlobInfo, BlobStore, PresignOptions, PutOptions} from './blob-store.js'

export interface StorageConfig {
  provider: string
  /** Local storage directory. */
  path: string
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  forcePathStyle?: boolean
}

/**
 * The blob store of `server.storage.*`, or null when the Hub has none: provider `none`, or
 * `s3` without a bucket. Callers answer 503 `artifact_storage_unconfigured` on null.
 */
export async function createBlobStore(c: StorageConfig): Promise<BlobStore | null> {
  if (c.provider === 'local') return createLocalBlobStore(c.path)
  if (c.provider === 's3' && c.bucket) {
    // Loaded only when used: the AWS SDK is large.
    const {createS3BlobStore} = await import('./s3-store.js')
    return createS3BlobStore({endpoint: c.endpoint || undefined, bucket: c.bucket, region: c.region, accessKeyId: c.accessKeyId || undefined, secretAccessKey: c.secretAccessKey || undefined, forcePathStyle: c.forcePathStyle})
  }
  return null
}
