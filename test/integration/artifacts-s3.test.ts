import http from 'node:http'
import {ListObjectsV2Command, S3Client} from '@aws-sdk/client-s3'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {listen, rawRequest, sha256} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {startS3, type TestS3} from '../helpers/s3-server.js'

const BUCKET = 'svc-artifacts'
const MAX = 12 * 1024 * 1024

/** Artifacts on S3-compatible storage: a real s3rver on loopback, checking signatures and expiry. */
describeEachDialect('artifacts on S3-compatible storage', (dialect) => {
  let s3: TestS3
  let endpoint: string
  let hub: TestHub
  let base: string
  let project: string
  let client: S3Client

  const objects = async () => {
    const r = await client.send(new ListObjectsV2Command({Bucket: BUCKET, Prefix: 'artifacts/'}))
    return (r.Contents ?? []).map((o) => o.Key!).sort()
  }
  const publish = (body: Buffer, opts: {name?: string; sha?: string; chunked?: boolean} = {}) =>
    rawRequest('POST', `${base}/api/v1/artifacts?name=${opts.name ?? 'data.bin'}&scope=${project}`, {
      token: hub.devToken,
      body,
      chunked: opts.chunked,
      headers: {'content-type': 'application/octet-stream', ...(opts.sha !== undefined && {'x-content-sha256': opts.sha})},
    })

  beforeAll(async () => {
    s3 = await startS3(BUCKET)
    endpoint = s3.endpoint
    client = s3.client
    hub = await startTestHub(dialect, {flags: {hosted: true}, env: {...s3.env, SVC_ARTIFACTS_MAXFILEBYTES: String(MAX)}})
    expect(hub.blobs?.kind).toBe('s3')
    base = await listen(hub)
    project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 's3-project'}})).body.project.id
  })
  afterAll(async () => {
    await hub?.dispose()
    await s3?.close()
  })

  it('publishes with a known length (one streaming PUT) and redirects reads to a short-lived signed URL', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024 + 17, 'a')
    body.write('# Title\n')
    const res = await publish(body, {name: 'notes.md', sha: sha256(body)})
    expect(res.status, res.body.toString()).toBe(201)
    const id = res.json.artifact.id
    expect(await objects()).toEqual([expect.stringMatching(new RegExp(`^artifacts/${id}/`))])

    const redirect = await rawRequest('GET', `${base}/api/v1/artifacts/${id}/files/notes.md`, {token: hub.devToken})
    expect(redirect.status).toBe(302)
    expect(redirect.headers['cache-control']).toBe('no-store')
    expect(redirect.headers['x-content-type-options']).toBe('nosniff')
    expect(redirect.headers['content-disposition']).toMatch(/^inline; filename="notes.md"/)
    const signed = new URL(redirect.headers.location!)
    expect(signed.origin).toBe(endpoint)
    expect(Number(signed.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(300)
    // The signed URL works without a Hub credential.
    const direct = await rawRequest('GET', signed.toString())
    expect(direct.status).toBe(200)
    expect(sha256(direct.body)).toBe(sha256(body))
    expect(direct.headers['content-disposition']).toMatch(/^inline; filename="notes.md"/)
    expect(signed.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/)
  })

  it('?stream=1 makes the Hub serve the bytes itself, with ETag and sandbox CSP', async () => {
    const body = Buffer.from('{"hello": "world"}')
    const id = (await publish(body, {name: 'x.json', sha: sha256(body)})).json.artifact.id
    const res = await rawRequest('GET', `${base}/api/v1/artifacts/${id}/versions/1/files/x.json?stream=1`, {token: hub.devToken})
    expect(res.status).toBe(200)
    expect(res.body.equals(body)).toBe(true)
    expect(res.headers.etag).toBe(`"${sha256(body)}"`)
    expect(res.headers['content-security-policy']).toMatch(/^sandbox/)
    expect(res.headers['content-disposition']).toMatch(/^inline/)
    const cached = await rawRequest('GET', `${base}/api/v1/artifacts/${id}/files/x.json?stream=1`, {token: hub.devToken, headers: {'if-none-match': res.headers.etag!}})
    expect(cached.status).toBe(304)
  })

  it('publishes without a length (chunked) as a multipart upload', async () => {
    const body = Buffer.alloc(9 * 1024 * 1024 + 5)
    for (let i = 0; i < body.length; i += 4096) body[i] = i % 251
    const res = await publish(body, {chunked: true, sha: sha256(body)})
    expect(res.status, res.body.toString()).toBe(201)
    expect(res.json.version.manifest[0]).toMatchObject({size: body.length, sha256: sha256(body)})
    const got = await rawRequest('GET', `${base}/api/v1/artifacts/${res.json.artifact.id}/files/data.bin?stream=1`, {token: hub.devToken})
    expect(sha256(got.body)).toBe(sha256(body))
  })

  it('a SHA-256 mismatch or an oversize chunked upload keeps no object', async () => {
    const before = await objects()
    expect((await publish(Buffer.from('abc'), {sha: sha256('abd')})).status).toBe(400)
    expect((await publish(Buffer.alloc(1024 * 1024, 1), {chunked: true, sha: sha256('nope')})).status).toBe(400)
    expect((await publish(Buffer.alloc(MAX + 1), {chunked: true})).status).toBe(413)
    expect(await objects()).toEqual(before)
  })

  it('a publish aborted mid-stream keeps no object and no row', async () => {
    const before = await objects()
    const rows = await hub.store.artifacts.countByProject(project)
    for (const [delay, chunked] of [[200, false], [0, false], [20, false], [200, true], [5, true]] as const) {
      await new Promise<void>((resolve) => {
        const req = http.request(`${base}/api/v1/artifacts?name=cut.bin&scope=${project}`, {
          method: 'POST',
          headers: {authorization: `Bearer ${hub.devToken}`, 'content-type': 'application/octet-stream', ...(!chunked && {'content-length': String(4 * 1024 * 1024)})},
        })
        req.on('error', () => resolve())
        req.on('response', () => resolve())
        req.write(Buffer.alloc(1024 * 1024, 3), () => setTimeout(() => req.destroy(), delay))
      })
    }
    await new Promise((r) => setTimeout(r, 300))
    let now = await objects()
    for (let i = 0; i < 150 && now.length !== before.length; i++) {
      await new Promise((r) => setTimeout(r, 100))
      now = await objects()
    }
    expect(now).toEqual(before)
    expect(await hub.store.artifacts.countByProject(project)).toBe(rows)
  })

  it('deleting an artifact removes its objects', async () => {
    const body = Buffer.from('bye')
    const id = (await publish(body, {name: 'bye.txt', sha: sha256(body)})).json.artifact.id
    expect((await objects()).some((k) => k.startsWith(`artifacts/${id}/`))).toBe(true)
    expect((await rawRequest('DELETE', `${base}/api/v1/artifacts/${id}`, {token: hub.devToken})).status).toBe(200)
    expect((await objects()).some((k) => k.startsWith(`artifacts/${id}/`))).toBe(false)
  })
})
