import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import S3rver from 's3rver'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {sha256} from '../helpers/artifacts.js'
import {cliEnv, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'

describe('svc artifact publish and get against a hosted Hub on S3-compatible storage', {timeout: 120_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-s3-'))
  const work = mkdtempSync(join(tmpdir(), 'svc-e2e-s3-work-'))
  const s3dir = mkdtempSync(join(tmpdir(), 'svc-e2e-s3rver-'))
  let s3: S3rver
  let server: RunningServer
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    s3 = new S3rver({address: '127.0.0.1', port: 0, silent: true, directory: s3dir, configureBuckets: [{name: 'e2e-artifacts'}]})
    const {port} = await s3.run()
    server = await startServerProcess(
      ['--hosted', '--host', '127.0.0.1'],
      cliEnv(home, {
        SVC_SERVER_AUTH_DEVMODE: 'true',
        SVC_SERVER_STORAGE_PROVIDER: 's3',
        SVC_SERVER_STORAGE_ENDPOINT: `http://127.0.0.1:${port}`,
        SVC_SERVER_STORAGE_BUCKET: 'e2e-artifacts',
        SVC_SERVER_STORAGE_ACCESSKEYID: 'S3RVER',
        SVC_SERVER_STORAGE_SECRETACCESSKEY: 'S3RVER',
      }),
      // The AWS SDK loads at start; on a busy machine that takes a while.
      60_000,
    )
    env = cliEnv(home, {SVC_HUB_ENDPOINT: server.url})
    const r = await runCli(['project', 'register', 's3demo', '--no-remote', '--json'], {env, timeoutMs: 60_000})
    expect(r.code, r.stderr).toBe(0)
    // Bounded by its own waits: the Hub's start and the CLI's call, 60 s each.
  }, 150_000)
  afterAll(async () => {
    await server?.stop()
    await s3?.close()
    rmSync(s3dir, {recursive: true, force: true})
  })

  it('publishes, then get follows the redirect to the signed URL and verifies the bytes', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024 + 3, 7)
    const file = join(work, 'blob.bin')
    writeFileSync(file, body)
    const pub = await runCli(['artifact', 'publish', file, '--project', 's3demo', '--json'], {env, timeoutMs: 60_000})
    expect(pub.code, pub.stdout + pub.stderr).toBe(0)
    expect(pub.json.version.manifest[0]).toMatchObject({size: body.length, sha256: sha256(body), mediaType: 'application/octet-stream'})
    const out = join(work, 'copy.bin')
    const got = await runCli(['artifact', 'get', pub.json.version.ref, '-o', out, '--json'], {env, timeoutMs: 60_000})
    expect(got.code, got.stdout + got.stderr).toBe(0)
    expect(sha256(readFileSync(out))).toBe(sha256(body))
  })
})
