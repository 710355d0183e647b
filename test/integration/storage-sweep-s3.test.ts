import {ListObjectsV2Command, PutObjectCommand} from '@aws-sdk/client-s3'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {ORPHAN_GRACE_MS} from '../../src/domain/artifacts/orphan-sweep.js'
import {listen, rawRequest, sha256} from '../helpers/artifacts.js'
import {describeEachDialect} from '../helpers/hub.js'
import {hubDbPerTest} from '../helpers/restart-hub.js'
import {startS3, type TestS3} from '../helpers/s3-server.js'
import {movableClock} from '../helpers/sign-in-hub.js'

/**
 * Issue 22 item 15 on object storage: objects under `artifacts/` that no file row references
 * (a crash between writing the object and committing its row) are removed when a Hub starts,
 * once older than the grace that protects other replicas' uploads in flight; referenced objects
 * and other prefixes stay. A real s3rver on loopback; the Hub's clock is moved past the grace.
 */
describeEachDialect('S3 storage: the start-up sweep', (dialect) => {
  const BUCKET = 'svc-sweep'
  const run = hubDbPerTest(dialect)
  let s3: TestS3
  beforeAll(async () => {
    s3 = await startS3(BUCKET)
  })
  afterAll(() => s3?.close())

  const objects = async () => ((await s3.client.send(new ListObjectsV2Command({Bucket: BUCKET}))).Contents ?? []).map((o) => o.Key!).sort()
  const put = (Key: string) => s3.client.send(new PutObjectCommand({Bucket: BUCKET, Key, Body: 'orphan'}))
  const start = async (clock = movableClock()) => {
    const hub = await run.start({flags: {hosted: true}, env: s3.env, clock})
    expect(hub.blobs?.kind).toBe('s3')
    return hub
  }

  it('keeps orphans within the grace (uploads in flight elsewhere); removes them after it; referenced objects stay', async () => {
    const h = await start()
    const base = await listen(h)
    const project = (await h.request('POST', '/api/v1/projects/register', {body: {name: 'alpha'}})).body.project.id
    const body = Buffer.from('kept bytes')
    const pub = await rawRequest('POST', `${base}/api/v1/artifacts?name=kept.txt&scope=${project}`, {token: h.devToken, body, headers: {'content-type': 'application/octet-stream', 'x-content-sha256': sha256(body)}})
    expect(pub.status, pub.body.toString()).toBe(201)
    const artifactId = pub.json.artifact.id as string
    const referenced = (await objects()).filter((k) => k.startsWith(`artifacts/${artifactId}/`))
    expect(referenced).toHaveLength(1)

    // What a crash leaves: objects whose rows never committed. And a key outside artifacts/.
    const orphans = [`artifacts/${artifactId}/orphan-of-a-version`, 'artifacts/never-committed/blob']
    for (const k of [...orphans, 'other/kept']) await put(k)

    // A start within the grace: these could be another replica's uploads about to commit.
    await start()
    expect(await objects()).toEqual([...referenced, ...orphans, 'other/kept'].sort())

    // A start past the grace removes the orphans only.
    const later = movableClock()
    later.advance(ORPHAN_GRACE_MS.s3 + 60_000)
    const h3 = await start(later)
    expect(await objects()).toEqual([...referenced, 'other/kept'].sort())
    const base3 = await listen(h3)
    const got = await rawRequest('GET', `${base3}/api/v1/artifacts/${artifactId}/files/kept.txt`, {token: h3.devToken})
    expect(got.status).toBe(302)
    const bytes = await fetch(got.headers.location!)
    expect(Buffer.from(await bytes.arrayBuffer()).toString()).toBe('kept bytes')
  })
})
