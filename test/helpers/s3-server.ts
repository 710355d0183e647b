import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {S3Client} from '@aws-sdk/client-s3'
import S3rver from 's3rver'

export interface TestS3 {
  endpoint: string
  /** A client of the server (to list or plant objects), with the checksum setting s3rver needs. */
  client: S3Client
  /** The Hub's storage settings for this bucket, as SVC_SERVER_STORAGE_* variables. */
  env: Record<string, string>
  close(): Promise<void>
}

/** A real s3rver on a loopback port (it checks signatures and expiry) with one empty bucket. */
export async function startS3(bucket: string): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s3rver-'))
  const s3 = new S3rver({address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{name: bucket, configs: []}]})
  const endpoint = `http://127.0.0.1:${(await s3.run()).port}`
  const client = new S3Client({endpoint, region: 'us-east-1', forcePathStyle: true, credentials: {accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER'}, requestChecksumCalculation: 'WHEN_REQUIRED'})
  const env = {
    SVC_SERVER_AUTH_DEVMODE: 'true',
    SVC_SERVER_STORAGE_PROVIDER: 's3',
    SVC_SERVER_STORAGE_ENDPOINT: endpoint,
    SVC_SERVER_STORAGE_BUCKET: bucket,
    SVC_SERVER_STORAGE_ACCESSKEYID: 'S3RVER',
    SVC_SERVER_STORAGE_SECRETACCESSKEY: 'S3RVER',
  }
  return {
    endpoint,
    client,
    env,
    close: async () => {
      client.destroy()
      await s3.close()
      rmSync(dir, {recursive: true, force: true})
    },
  }
}
