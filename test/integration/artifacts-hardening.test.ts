import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {listen, makeUser, rawRequest, sha256} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

const files = (root: string) => (existsSync(root) ? readdirSync(root, {recursive: true, withFileTypes: true}).filter((d) => d.isFile()) : [])

/**
 * Issue 22 item 14: publishing into an unknown project and into one the caller cannot read is
 * one identical refusal (no project ID named to a non-member). Item 16: artifact names with
 * Unicode bidi or other format characters (category Cf) are refused.
 */
describeEachDialect('artifact publish: refusals that leak nothing, names that cannot mislead', (dialect) => {
  let hub: TestHub
  let base: string
  let alice: {id: string; token: string}
  let carol: {id: string; token: string}
  let projectA: string
  beforeAll(async () => {
    hub = await startTestHub(dialect)
    base = await listen(hub)
    alice = await makeUser(hub, 'alice')
    carol = await makeUser(hub, 'carol')
    const r = await hub.request('POST', '/api/v1/projects/register', {token: alice.token, body: {name: 'alpha'}})
    projectA = r.body.project.id
  })
  afterAll(() => hub?.dispose())

  const publish = (token: string, q: Record<string, string>, body = Buffer.from('hello')) =>
    rawRequest('POST', `${base}/api/v1/artifacts?${new URLSearchParams(q)}`, {token, body, headers: {'content-type': 'application/octet-stream', 'x-content-sha256': sha256(body)}})

  it('an unknown project and an unreadable one (by ID or by slug) get the same refusal, naming only what was sent', async () => {
    const refusal = async (scope: string) => {
      const res = await publish(carol.token, {name: 'a.txt', scope})
      const {requestId, ...rest} = res.json.error
      expect(requestId).toBe(res.headers['x-request-id'])
      return {status: res.status, ...rest}
    }
    const unknownId = await refusal('0badc0de-0000-4000-8000-000000000000')
    const realId = await refusal(projectA)
    const unknownSlug = await refusal('no-such-project')
    const realSlug = await refusal('alpha')
    const shape = (scope: string) => ({status: 403, code: 'forbidden', message: `not allowed: artifact.create in project ${scope}`, details: {permission: 'artifact.create'}})
    expect(unknownId).toEqual(shape('0badc0de-0000-4000-8000-000000000000'))
    expect(realId).toEqual(shape(projectA))
    expect(unknownSlug).toEqual(shape('no-such-project'))
    // By slug the project's ID must not appear.
    expect(realSlug).toEqual(shape('alpha'))
    expect(JSON.stringify(realSlug)).not.toContain(projectA)
    expect(files(join(hub.home, '.svc', 'storage'))).toEqual([])
  })

  it.each([
    ['right-to-left override', 'report\u202Etxt.exe'],
    ['left-to-right isolate', 'a\u2066b.txt'],
    ['zero-width space', 'inv\u200Boice.pdf'],
    ['byte order mark', '\uFEFFnotes.md'],
    ['soft hyphen', 'pay\u00ADroll.csv'],
  ])('a name with a %s (Cf) is 400 validation_error and nothing is stored', async (_what, name) => {
    const res = await publish(alice.token, {name, scope: projectA})
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({code: 'validation_error', details: {fields: [{path: 'querystring.name', message: expect.stringMatching(/format/)}]}})
    const list = await hub.request('GET', `/api/v1/artifacts?scope=${projectA}`, {token: alice.token})
    expect(JSON.stringify(list.body)).not.toContain(name)
  })

  it('ordinary Unicode names still publish', async () => {
    const res = await publish(alice.token, {name: 'résumé – 東京.txt', scope: projectA})
    expect(res.status).toBe(201)
  })
})
