import {PassThrough, type Readable} from 'node:stream'
import {pipeline} from 'node:stream/promises'
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import {getSignedUrl} from '@aws-sdk/s3-request-presigner'
import {assertKey, type BlobInfo, type BlobStore, type PresignOptions, type PutOptions} from './blob-store.js'
import {measuring} from './measure.js'

export interface S3Options {
  endpoint?: string
  bucket: string
  region: string
  accessKeyId?: string
  secretAccessKey?: string
  /** Path-style addressing (`endpoint/bucket/key`); default: on when an endpoint is given. */
  forcePathStyle?: boolean
}

const noop = () => {}
const QUIET = {trace: noop, debug: noop, info: noop, warn: noop, error: noop}

/**
 * After an abandoned PutObject, the object is deleted at once and again after these delays: a
 * server may still be running the handler of the request the SDK cut off and create the object
 * after the first delete (s3rver does, with the bytes it got). Keys are never reused, so a late
 * delete cannot remove anything else.
 */
const LATE_DELETE_MS = [2_000, 10_000]

/** Parts of a multipart upload (used when the length is not known up front); S3 needs >= 5 MiB. */
const PART_BYTES = 8 * 1024 * 1024

/**
 * Blobs in an S3-compatible bucket. With a known length an upload is one streaming PutObject
 * (nothing buffered); without one it is a multipart upload buffering one part at a time, so
 * memory never grows with the file. A refused or failed upload removes what it wrote.
 */
export function createS3BlobStore(o: S3Options): BlobStore {
  const client = new S3Client({
    region: o.region || 'us-east-1',
    ...(o.endpoint && {endpoint: o.endpoint}),
    forcePathStyle: o.forcePathStyle ?? !!o.endpoint,
    ...(o.accessKeyId && {credentials: {accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey ?? ''}}),
    // Without this the SDK sends aws-chunked bodies with trailing checksums, which several
    // S3-compatible servers store verbatim (corrupting the object).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Failures reach the caller as errors; the SDK would also print some to the console.
    logger: QUIET,
  })
  const Bucket = o.bucket

  async function remove(Key: string) {
    await client.send(new DeleteObjectCommand({Bucket, Key}))
  }

  /** Removes what an abandoned upload may have left, now and late (see LATE_DELETE_MS). */
  async function discard(Key: string) {
    for (const ms of LATE_DELETE_MS) setTimeout(() => void remove(Key).catch(noop), ms).unref()
    await remove(Key).catch(noop)
  }

  async function putKnownLength(Key: string, body: Readable, size: number, opts: PutOptions): Promise<BlobInfo> {
    const m = measuring(opts.limit)
    const piped = pipeline(body, m.stream, ...(opts.signal ? [{signal: opts.signal}] : [])) as Promise<void>
    // The measuring stream is the request body; a source failure destroys it and fails the send.
    const sent = client.send(new PutObjectCommand({Bucket, Key, Body: m.stream, ContentLength: size}), {abortSignal: opts.signal})
    try {
      await Promise.all([piped, sent])
      const info = m.result()
      if (info.size !== size) throw new Error(`upload length ${info.size} differs from the announced ${size}`)
      await opts.accept?.(info)
      return info
    } catch (err) {
      m.stream.destroy()
      await Promise.allSettled([piped, sent])
      await discard(Key)
      throw err
    }
  }

  async function putMultipart(Key: string, body: Readable, opts: PutOptions): Promise<BlobInfo> {
    const m = measuring(opts.limit)
    const {UploadId} = await client.send(new CreateMultipartUploadCommand({Bucket, Key}), {abortSignal: opts.signal})
    const parts: Array<{ETag: string; PartNumber: number}> = []
    const sendPart = async (chunks: Buffer[]) => {
      const PartNumber = parts.length + 1
      const r = await client.send(new UploadPartCommand({Bucket, Key, UploadId, PartNumber, Body: Buffer.concat(chunks)}), {abortSignal: opts.signal})
      parts.push({ETag: r.ETag!, PartNumber})
    }
    try {
      let pending: Buffer[] = []
      let pendingBytes = 0
      const source = body.pipe(m.stream)
      // Failures surface through the loop below; a late one must not go uncaught.
      source.on('error', () => {})
      body.on('error', (e) => source.destroy(e))
      for await (const chunk of source as AsyncIterable<Buffer>) {
        opts.signal?.throwIfAborted()
        pending.push(chunk)
        pendingBytes += chunk.length
        if (pendingBytes >= PART_BYTES) {
          await sendPart(pending)
          pending = []
          pendingBytes = 0
        }
      }
      opts.signal?.throwIfAborted()
      if (pendingBytes || !parts.length) await sendPart(pending)
      const info = m.result()
      await opts.accept?.(info)
      await client.send(new CompleteMultipartUploadCommand({Bucket, Key, UploadId, MultipartUpload: {Parts: parts}}))
      return info
    } catch (err) {
      await client.send(new AbortMultipartUploadCommand({Bucket, Key, UploadId})).catch(() => {})
      throw err
    }
  }

  return {
    kind: 's3',
    async put(key, body, opts = {}) {
      assertKey(key)
      // The caller's stream is never destroyed here (an HTTP request must stay answerable, e.g.
      // with 413): the pipelines below run on a hop that only mirrors its data and errors.
      const own = new PassThrough()
      body.on('error', (e) => own.destroy(e))
      body.pipe(own)
      return opts.size !== undefined ? putKnownLength(key, own, opts.size, opts) : putMultipart(key, own, opts)
    },
    async get(key) {
      assertKey(key)
      try {
        const r = await client.send(new GetObjectCommand({Bucket, Key: key}))
        return {stream: r.Body as Readable, size: Number(r.ContentLength ?? 0)}
      } catch (err) {
        const name = (err as {name?: string}).name
        if (name === 'NoSuchKey' || name === 'NotFound') return null
        throw err
      }
    },
    async delete(key) {
      assertKey(key)
      await remove(key)
    },
    async keys(prefix, notAfter) {
      assertKey(prefix)
      const out: string[] = []
      let ContinuationToken: string | undefined
      do {
        const r = await client.send(new ListObjectsV2Command({Bucket, Prefix: `${prefix}/`, ContinuationToken}))
        for (const o of r.Contents ?? []) if (o.Key && o.LastModified && o.LastModified.getTime() <= notAfter.getTime()) out.push(o.Key)
        ContinuationToken = r.IsTruncated ? r.NextContinuationToken : undefined
      } while (ContinuationToken)
      return out
    },
    async presign(key: string, p: PresignOptions) {
      assertKey(key)
      const cmd = new GetObjectCommand({
        Bucket,
        Key: key,
        ...(p.contentType && {ResponseContentType: p.contentType}),
        ...(p.contentDisposition && {ResponseContentDisposition: p.contentDisposition}),
      })
      return getSignedUrl(client, cmd, {expiresIn: p.expiresIn})
    },
  }
}
