import type {Readable} from 'node:stream'

/** What a stored blob is: its length and the SHA-256 (hex) of its bytes. */
export interface BlobInfo {
  size: number
  sha256: string
}

export interface PutOptions {
  /** Aborting stops the upload; nothing is kept. */
  signal?: AbortSignal
  /** Length of the stream when the caller knows it (lets object storage stream in one request). */
  size?: number
  /**
   * Refuses more than `bytes`: the upload fails with `error()` as soon as they are exceeded
   * (nothing kept). The body is left as it is (not destroyed), so an answer can still be sent.
   */
  limit?: {bytes: number; error: () => Error}
  /**
   * Called with the measured size and digest before the blob becomes visible under its key.
   * Throwing refuses the blob: nothing is kept and `put` rethrows.
   */
  accept?: (info: BlobInfo) => void | Promise<void>
}

export interface PresignOptions {
  /** Seconds the URL stays valid. */
  expiresIn: number
  contentType?: string
  contentDisposition?: string
}

/**
 * Artifact and template storage: bytes as streams, never whole files in memory.
 * Keys are slash-separated relative paths of `[A-Za-z0-9._-]` segments.
 */
export interface BlobStore {
  readonly kind: 'local' | 's3'
  /**
   * Streams `body` to `key` while measuring and hashing it. Either the whole blob is kept
   * under `key` (after `accept` agreed) or nothing is: a failed, aborted or refused upload
   * leaves no object and no temporary file behind.
   */
  put(key: string, body: Readable, opts?: PutOptions): Promise<BlobInfo>
  /** The bytes of `key`, or null when there is no such blob. */
  get(key: string): Promise<{stream: Readable; size: number} | null>
  /** Removes `key`; removing a missing blob is not an error. */
  delete(key: string): Promise<void>
  /** A short-lived URL that serves `key` directly (object storage only). */
  presign?(key: string, opts: PresignOptions): Promise<string>
  /**
   * Start-up clean-up (domain/artifacts/orphan-sweep.ts). `clearTemp` (local storage) removes
   * every temporary upload file, which only an upload in flight may hold. `keys` lists the keys
   * under `prefix` last written at or before `notAfter`.
   */
  clearTemp?(): Promise<number>
  keys(prefix: string, notAfter: Date): Promise<string[]>
}

const SEGMENT = /^[A-Za-z0-9._-]+$/

/** Refuses keys that could escape the store (`..`, absolute paths, odd characters). */
export function assertKey(key: string): void {
  const parts = key.split('/')
  if (!parts.length || parts.some((p) => !SEGMENT.test(p) || p === '.' || p === '..')) throw new Error(`invalid blob key "${key}"`)
}
