import {existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {listen, makeUser, rawRequest, sha256} from '../helpers/artifacts.js'
import {describeEachDialect} from '../helpers/hub.js'
import {createHubDb, startHubOn, type HubDb} from '../helpers/restart-hub.js'
import type {TestHub} from '../helpers/hub.js'

/**
 * Issue 22 item 15: what a crash leaves in local storage (upload temp files, a blob whose row
 * never committed) is removed when the Hub next starts; blobs that rows reference stay.
 */
describeEachDialect('local storage: the start-up sweep', (dialect) => {
  let db: HubDb | null = null
  let hub: TestHub | null = null
  let storage = ''
  afterEach(async () => {
    await hub?.dispose()
    await db?.drop()
    rmSync(storage, {recursive: true, force: true})
    hub = db = null
  })

  it('removes .part files and unreferenced blobs at start; referenced blobs stay and still download', async () => {
    storage = mkdtempSync(join(tmpdir(), 'svc-storage-'))
    db = await createHubDb(dialect)
    const env = {SVC_SERVER_STORAGE_PATH: storage}
    hub = await startHubOn(db, {env})
    const base = await listen(hub)
    const alice = await makeUser(hub, 'alice')
    const project = (await hub.request('POST', '/api/v1/projects/register', {token: alice.token, body: {name: 'alpha'}})).body.project.id
    const body = Buffer.from('kept bytes')
    const pub = await rawRequest('POST', `${base}/api/v1/artifacts?name=kept.txt&scope=${project}`, {token: alice.token, body, headers: {'content-type': 'application/octet-stream', 'x-content-sha256': sha256(body)}})
    expect(pub.status).toBe(201)
    const artifactId = pub.json.artifact.id as string
    await hub.dispose()
    hub = null

    // What a kill -9 during uploads leaves: temp parts, and blobs whose rows never committed.
    const referenced = readdirSync(join(storage, 'artifacts', artifactId))
    expect(referenced).toHaveLength(1)
    mkdirSync(join(storage, '.tmp'), {recursive: true})
    for (let i = 0; i < 3; i++) writeFileSync(join(storage, '.tmp', `crashed-${i}.part`), 'partial')
    writeFileSync(join(storage, 'artifacts', artifactId, 'orphan-of-a-version'), 'orphan')
    mkdirSync(join(storage, 'artifacts', 'never-committed'), {recursive: true})
    writeFileSync(join(storage, 'artifacts', 'never-committed', 'blob'), 'orphan')

    hub = await startHubOn(db, {env})
    expect(readdirSync(join(storage, '.tmp'))).toEqual([])
    expect(existsSync(join(storage, 'artifacts', artifactId, 'orphan-of-a-version'))).toBe(false)
    expect(existsSync(join(storage, 'artifacts', 'never-committed', 'blob'))).toBe(false)
    expect(readdirSync(join(storage, 'artifacts', artifactId))).toEqual(referenced)
    const base2 = await listen(hub)
    const got = await rawRequest('GET', `${base2}/api/v1/artifacts/${artifactId}/files/kept.txt`, {token: alice.token})
    expect(got.status).toBe(200)
    expect(got.body.toString()).toBe('kept bytes')
  })
})
