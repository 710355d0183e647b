import {existsSync, readdirSync} from 'node:fs'
import http from 'node:http'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {listen, makeUser, rawRequest, sha256} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

const MAX = 64 * 1024

/** Files under the storage root, temp files included (none may be left by a failed upload). */
function storedFiles(root: string): string[] {
  if (!existsSync(root)) return []
  return readdirSync(root, {recursive: true, withFileTypes: true})
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name))
}

describeEachDialect('artifacts over the API', (dialect) => {
  let hub: TestHub
  let base: string
  let storage: string
  type U = {id: string; email: string; token: string}
  let alice: U // owner of project A, publishes
  let bob: U // member of A
  let carol: U // in no project
  let dave: U // member of D
  let projectA: string
  let projectD: string

  const url = (path: string) => `${base}${path}`
  const publish = (token: string | null, q: Record<string, string>, body: Buffer, headers: Record<string, string> = {}) =>
    rawRequest('POST', url(`/api/v1/artifacts?${new URLSearchParams(q)}`), {token, body, headers: {'content-type': 'application/octet-stream', ...headers}})
  const get = (token: string | null, path: string, headers: Record<string, string> = {}) => rawRequest('GET', url(path), {token, headers})
  const register = async (who: U, name: string) => {
    const res = await hub.request('POST', '/api/v1/projects/register', {token: who.token, body: {name}})
    expect(res.status).toBe(201)
    return res.body.project.id as string
  }
  const published = async (q: Record<string, string>, body: Buffer, token = alice.token) => {
    const res = await publish(token, {scope: projectA, ...q}, body, {'x-content-sha256': sha256(body)})
    expect(res.status, res.body.toString()).toBe(201)
    return res.json
  }

  beforeAll(async () => {
    hub = await startTestHub(dialect, {env: {SVC_ARTIFACTS_MAXFILEBYTES: String(MAX)}})
    base = await listen(hub)
    storage = join(hub.home, '.svc', 'storage')
    alice = await makeUser(hub, 'alice')
    bob = await makeUser(hub, 'bob')
    carol = await makeUser(hub, 'carol')
    dave = await makeUser(hub, 'dave')
    projectA = await register(alice, 'alpha')
    projectD = await register(dave, 'delta')
    expect((await hub.request('POST', `/api/v1/projects/${projectA}/members`, {token: alice.token, body: {userId: bob.id, role: 'member'}})).status).toBe(200)
  })
  afterAll(() => hub?.dispose())

  it('publishes: 201 with exactly the contract shape, bytes in local storage', async () => {
    const body = Buffer.from('# Report\n\nAll good.\n')
    const res = await publish(alice.token, {name: 'report.md', title: 'Weekly report', scope: projectA}, body, {'x-content-sha256': sha256(body)})
    expect(res.status).toBe(201)
    const j = res.json
    expect(Object.keys(j).sort()).toEqual(['artifact', 'url', 'version'])
    expect(Object.keys(j.artifact).sort()).toEqual(['createdAt', 'currentVersion', 'id', 'owner', 'projectId', 'ref', 'title'])
    expect(Object.keys(j.version).sort()).toEqual(['createdAt', 'manifest', 'ref', 'seq'])
    expect(j.artifact).toMatchObject({ref: `svc://artifact/${j.artifact.id}`, title: 'Weekly report', owner: {kind: 'user', id: alice.id}, projectId: projectA, currentVersion: 1})
    expect(j.version).toMatchObject({seq: 1, ref: `svc://artifact/${j.artifact.id}@1`, manifest: [{path: 'report.md', size: body.length, sha256: sha256(body), mediaType: 'text/markdown'}]})
    expect(j.url).toBe(`${hub.config.publicUrl}/projects/${projectA}/artifacts/${j.artifact.id}`)
    const files = storedFiles(join(storage, 'artifacts', j.artifact.id))
    expect(files).toHaveLength(1)
    const again = await get(alice.token, `/api/v1/artifacts/${j.artifact.id}`)
    expect(again.status).toBe(200)
    expect(again.json).toEqual(j)
  })

  it('title defaults to the file name; the project may be named by slug; X-Content-SHA256 is optional', async () => {
    const res = await publish(alice.token, {name: 'notes.txt', scope: 'alpha'}, Buffer.from('hi'))
    expect(res.status).toBe(201)
    expect(res.json.artifact).toMatchObject({title: 'notes.txt', projectId: projectA})
  })

  it('accepts any content type, none, JSON and an empty file, streaming the raw body', async () => {
    for (const ct of ['application/json', 'text/plain', 'image/png']) {
      const body = Buffer.from('{"a": 1}')
      const res = await publish(alice.token, {name: 'x.json', scope: projectA}, body, {'content-type': ct, 'x-content-sha256': sha256(body)})
      expect(res.status, ct).toBe(201)
      expect(res.json.version.manifest[0].sha256).toBe(sha256(body))
    }
    const none = await rawRequest('POST', url(`/api/v1/artifacts?name=n.txt&scope=${projectA}`), {token: alice.token, body: Buffer.from('abc')})
    expect(none.status).toBe(201)
    const empty = await publish(alice.token, {name: 'empty.txt', scope: projectA}, Buffer.alloc(0), {'x-content-sha256': sha256('')})
    expect(empty.status).toBe(201)
    expect(empty.json.version.manifest[0].size).toBe(0)
  })

  it('400: missing name, a user without scope, a malformed or mismatching SHA-256 (nothing kept)', async () => {
    const before = storedFiles(storage).length
    const noName = await publish(alice.token, {scope: projectA}, Buffer.from('x'))
    expect(noName.status).toBe(400)
    expect(noName.json.error.code).toBe('validation_error')
    const badName = await publish(alice.token, {name: '../etc/passwd', scope: projectA}, Buffer.from('x'))
    expect(badName.status).toBe(400)
    const noScope = await publish(alice.token, {name: 'a.txt'}, Buffer.from('x'))
    expect(noScope.status).toBe(400)
    expect(noScope.json.error.details.fields[0].path).toBe('querystring.scope')
    const malformed = await publish(alice.token, {name: 'a.txt', scope: projectA}, Buffer.from('x'), {'x-content-sha256': 'abc'})
    expect(malformed.status).toBe(400)
    const mismatch = await publish(alice.token, {name: 'a.txt', scope: projectA}, Buffer.from('the bytes'), {'x-content-sha256': sha256('other bytes')})
    expect(mismatch.status).toBe(400)
    expect(mismatch.json.error).toMatchObject({code: 'sha256_mismatch', details: {expected: sha256('other bytes'), actual: sha256('the bytes')}})
    expect(storedFiles(storage).length).toBe(before)
  })

  it('401 without a credential, on publish and on reads', async () => {
    const a = await published({name: 'a.txt'}, Buffer.from('a'))
    expect((await publish(null, {name: 'a.txt', scope: projectA}, Buffer.from('x'))).status).toBe(401)
    const read = await get(null, `/api/v1/artifacts/${a.artifact.id}`)
    expect(read.status).toBe(401)
    expect(read.json.error.code).toBe('unauthorized')
  })

  it('403 when the caller may not publish in the scope (including a project that does not exist)', async () => {
    const res = await publish(carol.token, {name: 'a.txt', scope: projectA}, Buffer.from('x'))
    expect(res.status).toBe(403)
    expect(res.json.error.code).toBe('forbidden')
    expect((await publish(carol.token, {name: 'a.txt', scope: 'no-such-project'}, Buffer.from('x'))).status).toBe(403)
  })

  it('413 before anything is stored: judged from Content-Length, and enforced while streaming', async () => {
    const before = storedFiles(storage).length
    const big = Buffer.alloc(MAX + 1, 1)
    const declared = await publish(alice.token, {name: 'big.bin', scope: projectA}, big)
    expect(declared.status).toBe(413)
    expect(declared.json.error).toMatchObject({code: 'file_too_large', details: {maxBytes: MAX, size: MAX + 1}})
    const chunked = await rawRequest('POST', url(`/api/v1/artifacts?name=big.bin&scope=${projectA}`), {token: alice.token, body: big, chunked: true})
    expect(chunked.status).toBe(413)
    expect(storedFiles(storage).length).toBe(before)
    const exact = await published({name: 'max.bin'}, Buffer.alloc(MAX, 2))
    expect(exact.version.manifest[0].size).toBe(MAX)
  })

  it('404 for an artifact that does not exist, and the same 404 for one the caller may not read', async () => {
    const a = await published({name: 'secret.txt'}, Buffer.from('s'))
    const missing = await get(alice.token, '/api/v1/artifacts/00000000-0000-0000-0000-000000000000')
    const hidden = await get(carol.token, `/api/v1/artifacts/${a.artifact.id}`)
    expect(missing.status).toBe(404)
    expect(hidden.status).toBe(404)
    expect(hidden.json.error.message).toBe(missing.json.error.message)
    expect((await get(carol.token, `/api/v1/artifacts/${a.artifact.id}/files/secret.txt`)).status).toBe(404)
    expect((await get(carol.token, `/api/v1/artifacts/${a.artifact.id}/versions/1/files/secret.txt`)).status).toBe(404)
    expect((await get(alice.token, `/api/v1/artifacts/${a.artifact.id}/files/other.txt`)).status).toBe(404)
  })

  it('access: owner and home-project members read; others 404; members may not change, delete or share (403)', async () => {
    const a = await published({name: 'team.txt'}, Buffer.from('team'))
    const id = a.artifact.id
    expect((await get(alice.token, `/api/v1/artifacts/${id}/files/team.txt`)).body.toString()).toBe('team')
    expect((await get(bob.token, `/api/v1/artifacts/${id}/files/team.txt`)).body.toString()).toBe('team')
    expect((await get(hub.devToken, `/api/v1/artifacts/${id}`)).status).toBe(200) // system admin
    expect((await get(carol.token, `/api/v1/artifacts/${id}`)).status).toBe(404)
    const v2 = await rawRequest('POST', url(`/api/v1/artifacts/${id}/versions?name=team.txt`), {token: bob.token, body: Buffer.from('x')})
    expect(v2.status).toBe(403)
    expect((await rawRequest('DELETE', url(`/api/v1/artifacts/${id}`), {token: bob.token})).status).toBe(403)
    expect((await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: bob.token, body: {userId: carol.id}})).status).toBe(403)
    expect((await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: carol.token, body: {userId: carol.id}})).status).toBe(404)
    expect((await rawRequest('DELETE', url(`/api/v1/artifacts/${id}`), {token: carol.token})).status).toBe(404)
  })

  it('grants: the owner shares with a user or a project, lists and revokes', async () => {
    const a = await published({name: 'shared.txt'}, Buffer.from('shared'))
    const id = a.artifact.id
    const bad = await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: alice.token, body: {userId: carol.id, projectId: projectD}})
    expect(bad.status).toBe(400)
    const toCarol = await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: alice.token, body: {email: carol.email}})
    expect(toCarol.status).toBe(200)
    expect(toCarol.body.grants).toEqual([expect.objectContaining({kind: 'user', id: carol.id, grantedBy: `user:${alice.id}`})])
    expect((await get(carol.token, `/api/v1/artifacts/${id}/files/shared.txt`)).body.toString()).toBe('shared')
    expect((await get(dave.token, `/api/v1/artifacts/${id}`)).status).toBe(404)
    // A slug names only a project the owner can see (slugs are guessable); an ID any project.
    expect((await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: alice.token, body: {projectId: 'delta'}})).status).toBe(404)
    const toD = await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: alice.token, body: {projectId: projectD}})
    expect(toD.body.grants.map((g: {kind: string; id: string}) => `${g.kind}:${g.id}`).sort()).toEqual([`project:${projectD}`, `user:${carol.id}`].sort())
    expect((await get(dave.token, `/api/v1/artifacts/${id}`)).status).toBe(200)
    const listed = await hub.request('GET', `/api/v1/artifacts/${id}/grants`, {token: alice.token})
    expect(listed.body.grants).toHaveLength(2)
    expect((await hub.request('POST', `/api/v1/artifacts/${id}/grants`, {token: alice.token, body: {userId: 'nobody'}})).status).toBe(404)
    const revoked = await hub.request('DELETE', `/api/v1/artifacts/${id}/grants/user/${carol.id}`, {token: alice.token})
    expect(revoked.status).toBe(200)
    expect((await get(carol.token, `/api/v1/artifacts/${id}`)).status).toBe(404)
    expect((await hub.request('DELETE', `/api/v1/artifacts/${id}/grants/user/${carol.id}`, {token: alice.token})).status).toBe(404)
  })

  it('user access tokens are bounded by their project and permissions', async () => {
    const a = await published({name: 'tok.txt'}, Buffer.from('tok'))
    const id = a.artifact.id
    const mint = async (projectId: string, permissions: string[], who = alice) => {
      const r = await hub.request('POST', '/api/v1/auth/tokens', {token: who.token, body: {name: 't', projectId, permissions}})
      expect(r.status).toBe(201)
      return r.body.token as string
    }
    const readA = await mint(projectA, ['artifact.read'])
    expect((await get(readA, `/api/v1/artifacts/${id}`)).status).toBe(200)
    expect((await publish(readA, {name: 'x.txt', scope: projectA}, Buffer.from('x'))).status).toBe(403)
    const createA = await mint(projectA, ['artifact.read', 'artifact.create'])
    expect((await publish(createA, {name: 'x.txt', scope: projectA}, Buffer.from('x'))).status).toBe(201)
    const noRead = await mint(projectA, ['project.read'])
    expect((await get(noRead, `/api/v1/artifacts/${id}`)).status).toBe(404)
    // A token bounded to another project does not reach this one's artifacts, even its owner's.
    const other = await register(alice, 'alice-other')
    const readOther = await mint(other, ['artifact.read'])
    expect((await get(readOther, `/api/v1/artifacts/${id}`)).status).toBe(404)
  })

  it('versions: the owner publishes the next version; files by current and by seq; unknown seq is 404', async () => {
    const v1 = await published({name: 'doc.txt'}, Buffer.from('one'))
    const id = v1.artifact.id
    const body2 = Buffer.from('two')
    const v2 = await rawRequest('POST', url(`/api/v1/artifacts/${id}/versions?name=doc.txt`), {token: alice.token, body: body2, headers: {'x-content-sha256': sha256(body2)}})
    expect(v2.status).toBe(201)
    expect(v2.json.artifact.currentVersion).toBe(2)
    expect(v2.json.version).toMatchObject({seq: 2, ref: `svc://artifact/${id}@2`})
    const v3 = await rawRequest('POST', url(`/api/v1/artifacts/${id}/versions?name=doc-v3.txt`), {token: alice.token, body: Buffer.from('three')})
    expect(v3.json.version.seq).toBe(3)
    expect((await get(bob.token, `/api/v1/artifacts/${id}/files/doc-v3.txt`)).body.toString()).toBe('three')
    expect((await get(bob.token, `/api/v1/artifacts/${id}/files/doc.txt`)).status).toBe(404)
    expect((await get(bob.token, `/api/v1/artifacts/${id}/versions/1/files/doc.txt`)).body.toString()).toBe('one')
    expect((await get(bob.token, `/api/v1/artifacts/${id}/versions/2/files/doc.txt`)).body.toString()).toBe('two')
    const meta1 = await get(bob.token, `/api/v1/artifacts/${id}/versions/1`)
    expect(meta1.json.version).toMatchObject({seq: 1, manifest: [{path: 'doc.txt', sha256: sha256('one')}]})
    expect(meta1.json.artifact.currentVersion).toBe(3)
    expect((await get(bob.token, `/api/v1/artifacts/${id}/versions/9`)).status).toBe(404)
    expect((await get(bob.token, `/api/v1/artifacts/${id}/versions/9/files/doc.txt`)).status).toBe(404)
    const mismatch = await rawRequest('POST', url(`/api/v1/artifacts/${id}/versions?name=doc.txt`), {token: alice.token, body: Buffer.from('four'), headers: {'x-content-sha256': sha256('no')}})
    expect(mismatch.status).toBe(400)
    expect((await get(bob.token, `/api/v1/artifacts/${id}`)).json.artifact.currentVersion).toBe(3)
  })

  it('delivery headers: Content-Disposition per type, nosniff, sandbox CSP, ETag and 304', async () => {
    const cases: Array<[string, string]> = [
      ['a.txt', 'inline'],
      ['a.md', 'inline'],
      ['a.csv', 'inline'],
      ['a.tsv', 'inline'],
      ['a.json', 'inline'],
      ['a.yaml', 'inline'],
      ['a.toml', 'inline'],
      ['a.png', 'inline'],
      ['a.jpg', 'inline'],
      ['a.gif', 'inline'],
      ['a.webp', 'inline'],
      ['a.html', 'attachment'],
      ['a.svg', 'attachment'],
      ['a.pdf', 'attachment'],
      ['a.bin', 'attachment'],
    ]
    for (const [name, disposition] of cases) {
      const body = Buffer.from(`content of ${name}`)
      const a = await published({name}, body)
      const res = await get(bob.token, `/api/v1/artifacts/${a.artifact.id}/files/${name}`)
      expect(res.status, name).toBe(200)
      expect(res.headers['content-disposition'], name).toBe(`${disposition}; filename="${name}"; filename*=UTF-8''${name}`)
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['content-security-policy']).toMatch(/^sandbox; default-src 'none'/)
      expect(res.headers.etag).toBe(`"${sha256(body)}"`)
      expect(res.headers['content-length']).toBe(String(body.length))
      expect(res.body.equals(body)).toBe(true)
    }
    const a = await published({name: 'page.html'}, Buffer.from('<script>alert(1)</script>'))
    const html = await get(bob.token, `/api/v1/artifacts/${a.artifact.id}/files/page.html`)
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8')
    const etag = html.headers.etag!
    const cached = await get(bob.token, `/api/v1/artifacts/${a.artifact.id}/files/page.html`, {'if-none-match': etag})
    expect(cached.status).toBe(304)
    expect(cached.body.length).toBe(0)
    expect(cached.headers.etag).toBe(etag)
    expect((await get(bob.token, `/api/v1/artifacts/${a.artifact.id}/files/page.html`, {'if-none-match': '"other"'})).status).toBe(200)
  })

  it('a publish aborted mid-stream leaves nothing behind: no blob, no temp file, no row', async () => {
    const before = storedFiles(storage)
    const rowsBefore = await hub.store.artifacts.countByProject(projectA)
    const seen: string[] = []
    // Cut at different moments (during authorization, mid-stream); a late request error must
    // never become an uncaught exception in the Hub (vitest fails the run on one).
    for (const delay of [100, 0, 2, 5, 10, 20, 40]) {
      await new Promise<void>((resolve) => {
        const req = http.request(url(`/api/v1/artifacts?name=cut.bin&scope=${projectA}`), {
          method: 'POST',
          headers: {authorization: `Bearer ${alice.token}`, 'content-length': String(MAX), 'content-type': 'application/octet-stream'},
        })
        req.on('error', () => resolve())
        req.on('response', (res) => {
          seen.push(String(res.statusCode))
          resolve()
        })
        req.write(Buffer.alloc(MAX / 2, 3), () => setTimeout(() => req.destroy(), delay))
      })
    }
    expect(seen).toEqual([])
    // Let the Hub notice the disconnect and clean up.
    await new Promise((r) => setTimeout(r, 300))
    for (let i = 0; i < 200 && storedFiles(storage).length !== before.length; i++) await new Promise((r) => setTimeout(r, 50))
    expect(storedFiles(storage)).toEqual(before)
    expect(readdirSync(join(storage, '.tmp'))).toEqual([])
    expect(await hub.store.artifacts.countByProject(projectA)).toBe(rowsBefore)
  })

  it('the owner deletes: rows and bytes go; deleting the home project keeps artifacts', async () => {
    const stats = async () => (await hub.request('GET', `/api/v1/projects/${projectA}`, {token: alice.token})).body.project.stats.artifacts
    const count = await stats()
    expect(count).toBe(await hub.store.artifacts.countByProject(projectA))
    const a = await published({name: 'gone.txt'}, Buffer.from('gone'))
    expect(await stats()).toBe(count + 1)
    const dir = join(storage, 'artifacts', a.artifact.id)
    expect(storedFiles(dir)).toHaveLength(1)
    const del = await rawRequest('DELETE', url(`/api/v1/artifacts/${a.artifact.id}`), {token: alice.token})
    expect(del.status).toBe(200)
    expect(del.json.artifact.id).toBe(a.artifact.id)
    expect((await get(alice.token, `/api/v1/artifacts/${a.artifact.id}`)).status).toBe(404)
    expect(storedFiles(dir)).toHaveLength(0)
    expect(await stats()).toBe(count)

    const temp = await register(alice, 'short-lived')
    const kept = await publish(alice.token, {name: 'kept.txt', scope: temp}, Buffer.from('kept'))
    expect(kept.status).toBe(201)
    expect((await hub.request('DELETE', `/api/v1/projects/${temp}`, {token: alice.token})).status).toBe(200)
    const after = await get(alice.token, `/api/v1/artifacts/${kept.json.artifact.id}/files/kept.txt`)
    expect(after.status).toBe(200)
    expect(after.body.toString()).toBe('kept')
    expect(after.headers['content-disposition']).toMatch(/^inline/)
  })
})

describeEachDialect('artifacts without storage', (dialect) => {
  let hub: TestHub
  beforeAll(async () => {
    hub = await startTestHub(dialect, {flags: {hosted: true}, env: {SVC_SERVER_AUTH_DEVMODE: 'true', SVC_SERVER_STORAGE_PROVIDER: 'none'}})
  })
  afterAll(() => hub?.dispose())

  it('503 artifact_storage_unconfigured on publish and on file delivery', async () => {
    const project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'nostore'}})).body.project.id
    const res = await hub.app.inject({method: 'POST', url: `/api/v1/artifacts?name=a.txt&scope=${project}`, headers: {authorization: `Bearer ${hub.devToken}`, 'content-type': 'text/plain'}, payload: 'hello'})
    expect(res.statusCode).toBe(503)
    expect(res.json().error.code).toBe('artifact_storage_unconfigured')
    // An artifact recorded while the Hub had storage: its metadata reads, its bytes are 503.
    const t = new Date().toISOString()
    await hub.store.artifacts.insert({id: 'a-old', title: 'old', ownerKind: 'user', ownerId: 'dev-user', projectId: project, currentVersion: 1, createdAt: t, updatedAt: t})
    await hub.store.artifacts.insertVersion({artifactId: 'a-old', seq: 1, entryPath: 'old.txt', createdByKind: 'user', createdById: 'dev-user', createdAt: t, files: [{path: 'old.txt', size: 3, sha256: 'x'.repeat(64), mediaType: 'text/plain', blobKey: 'artifacts/a-old/k'}]})
    expect((await hub.request('GET', '/api/v1/artifacts/a-old')).status).toBe(200)
    const file = await hub.request('GET', '/api/v1/artifacts/a-old/files/old.txt')
    expect(file.status).toBe(503)
    expect(file.body.error.code).toBe('artifact_storage_unconfigured')
  })

  it('s3 without a bucket is unconfigured too', async () => {
    const s3 = await startTestHub(dialect, {flags: {hosted: true}, env: {SVC_SERVER_AUTH_DEVMODE: 'true', SVC_SERVER_STORAGE_PROVIDER: 's3', SVC_SERVER_STORAGE_ENDPOINT: 'http://127.0.0.1:1'}})
    try {
      expect(s3.blobs).toBeNull()
      const project = (await s3.request('POST', '/api/v1/projects/register', {body: {name: 'nobucket'}})).body.project.id
      const res = await s3.app.inject({method: 'POST', url: `/api/v1/artifacts?name=a.txt&scope=${project}`, headers: {authorization: `Bearer ${s3.devToken}`}, payload: 'hello'})
      expect(res.statusCode).toBe(503)
    } finally {
      await s3.dispose()
    }
  })
})
