import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

const DAY = 86_400_000

describeEachDialect('user access tokens', (dialect) => {
  let hub: TestHub
  let offset = 0
  const clock = {now: () => new Date(Date.now() + offset)}
  let alice: TestUser
  let bob: TestUser
  let projectA: string
  let projectB: string
  let bobProject: string

  const register = async (who: TestUser, name: string) => {
    const res = await hub.request('POST', '/api/v1/projects/register', {token: who.token, body: {name}})
    expect(res.status).toBe(201)
    return res.body.project.id as string
  }
  const createToken = (body: Record<string, unknown>, token = alice.token) => hub.request('POST', '/api/v1/auth/tokens', {token, body})

  beforeAll(async () => {
    hub = await startTestHub(dialect, {clock})
    alice = await createUser(hub, {email: 'alice@example.test', displayName: 'Alice'})
    bob = await createUser(hub, {email: 'bob@example.test'})
    projectA = await register(alice, 'alpha')
    projectB = await register(alice, 'beta')
    bobProject = await register(bob, 'bobs')
  })
  afterAll(() => hub?.dispose())

  it('create answers 201 with the secret once; list never shows it', async () => {
    const res = await createToken({name: 'ci', projectId: projectA, permissions: ['project.read', 'agent.list', 'project.read']})
    expect(res.status).toBe(201)
    const t = res.body
    expect(t.token).toMatch(/^svc_pat_[0-9a-f]{64}$/)
    expect(t).toMatchObject({name: 'ci', projectId: projectA, permissions: ['agent.list', 'project.read'], status: 'active', revokedAt: null, lastUsedAt: null})
    expect(t.prefix).toBe(t.token.slice(0, t.prefix.length))
    expect(t.token.length).toBeGreaterThan(t.prefix.length + 32)
    // Default lifetime: 90 days.
    expect(Math.abs(Date.parse(t.expiresAt) - Date.parse(t.createdAt) - 90 * DAY)).toBeLessThan(1000)

    const list = await hub.request('GET', '/api/v1/auth/tokens', {token: alice.token})
    expect(list.status).toBe(200)
    const listed = list.body.tokens.find((x: {id: string}) => x.id === t.id)
    expect(listed).toMatchObject({id: t.id, name: 'ci', prefix: t.prefix, status: 'active'})
    expect(listed).not.toHaveProperty('token')
    expect(JSON.stringify(list.body)).not.toContain(t.token)
    // Another user's list does not show it.
    const other = await hub.request('GET', '/api/v1/auth/tokens', {token: bob.token})
    expect(other.body.tokens.map((x: {id: string}) => x.id)).not.toContain(t.id)
  })

  it('whoami with a token reports credential kind user_access_token and the token bounds', async () => {
    const {body: t} = await createToken({name: 'me', projectId: projectA, permissions: ['project.read']})
    const me = await hub.request('GET', '/api/v1/auth/me', {token: t.token})
    expect(me.status).toBe(200)
    expect(me.body).toEqual({
      principal: {kind: 'user', id: alice.user.id, email: 'alice@example.test', displayName: 'Alice'},
      credentialKind: 'user_access_token',
      systemAdmin: false,
      token: {id: t.id, projectId: projectA, permissions: ['project.read']},
    })
    const listed = await hub.request('GET', '/api/v1/auth/tokens', {token: alice.token})
    expect(listed.body.tokens.find((x: {id: string}) => x.id === t.id).lastUsedAt).not.toBeNull()
  })

  it('is bounded to its project and its permissions, whatever its user may do', async () => {
    const {body: t} = await createToken({name: 'read-a', projectId: projectA, permissions: ['project.read']})
    // Inside the bounds.
    expect((await hub.request('GET', `/api/v1/projects/${projectA}`, {token: t.token})).status).toBe(200)
    // Alice owns project B, but the token is for A: B does not exist for it.
    const b = await hub.request('GET', `/api/v1/projects/${projectB}`, {token: t.token})
    expect([b.status, b.body.error.code]).toEqual([404, 'not_found'])
    expect((await hub.request('DELETE', `/api/v1/projects/${projectB}`, {token: t.token})).status).toBe(404)
    // The list holds only the token's project.
    const list = await hub.request('GET', '/api/v1/projects', {token: t.token})
    expect(list.body.projects.map((p: {id: string}) => p.id)).toEqual([projectA])
    // Beyond its permissions: 403, although Alice is the owner.
    const patch = await hub.request('PATCH', `/api/v1/projects/${projectA}`, {token: t.token, body: {description: 'x'}})
    expect([patch.status, patch.body.error.code]).toEqual([403, 'forbidden'])
    const del = await hub.request('DELETE', `/api/v1/projects/${projectA}`, {token: t.token})
    expect([del.status, del.body.error.code]).toEqual([403, 'forbidden'])
    const member = await hub.request('POST', `/api/v1/projects/${projectA}/members`, {token: t.token, body: {email: 'bob@example.test', role: 'member'}})
    expect(member.status).toBe(403)
    // It cannot create new projects either.
    const reg = await hub.request('POST', '/api/v1/projects/register', {token: t.token, body: {name: 'new-one'}})
    expect([reg.status, reg.body.error.code]).toEqual([403, 'forbidden'])
    // The project still exists.
    expect((await hub.request('GET', `/api/v1/projects/${projectA}`, {token: alice.token})).status).toBe(200)
  })

  it('a token with update permission may update its project', async () => {
    const {body: t} = await createToken({name: 'upd', projectId: projectA, permissions: ['project.read', 'project.update']})
    const res = await hub.request('PATCH', `/api/v1/projects/${projectA}`, {token: t.token, body: {description: 'set by token'}})
    expect(res.status).toBe(200)
    expect(res.body.project.description).toBe('set by token')
  })

  it('a token cannot create or revoke tokens, and cannot use admin routes', async () => {
    const {body: t} = await createToken({name: 'no-mint', projectId: projectA, permissions: ['project.read']})
    const res = await createToken({name: 'child', projectId: projectA, permissions: ['project.read']}, t.token)
    expect([res.status, res.body.error.code]).toEqual([403, 'forbidden'])
    const revoke = await hub.request('DELETE', `/api/v1/auth/tokens/${t.id}`, {token: t.token})
    expect([revoke.status, revoke.body.error.code]).toEqual([403, 'forbidden'])
    // Nor list its siblings.
    const list = await hub.request('GET', '/api/v1/auth/tokens', {token: t.token})
    expect([list.status, list.body.error.code]).toEqual([403, 'forbidden'])
    // Even a system admin's token does not reach the admin routes.
    const {body: adminToken} = await createToken({name: 'adm', projectId: projectA, permissions: ['project.read']}, hub.devToken)
    expect((await hub.request('GET', '/api/v1/users', {token: adminToken.token})).status).toBe(403)
  })

  it('refuses unknown permissions, empty lists, bad expiry and foreign projects', async () => {
    const unknown = await createToken({name: 'x', projectId: projectA, permissions: ['project.read', 'project.own_everything']})
    expect(unknown.status).toBe(400)
    expect(unknown.body.error.code).toBe('validation_error')
    expect(unknown.body.error.details.fields).toEqual([expect.objectContaining({path: 'permissions'})])
    expect(unknown.body.error.message).toContain('project.own_everything')

    const empty = await createToken({name: 'x', projectId: projectA, permissions: []})
    expect([empty.status, empty.body.error.code]).toEqual([400, 'validation_error'])
    expect(empty.body.error.details.fields.map((f: {path: string}) => f.path)).toContain('body.permissions')

    for (const expiresAt of ['not a time', new Date(Date.now() - 1000).toISOString(), new Date(Date.now() + 400 * DAY).toISOString()]) {
      const res = await createToken({name: 'x', projectId: projectA, permissions: ['project.read'], expiresAt})
      expect([res.status, res.body.error.code], expiresAt).toEqual([400, 'validation_error'])
      expect(res.body.error.details.fields[0].path).toBe('expiresAt')
    }

    const foreign = await createToken({name: 'x', projectId: bobProject, permissions: ['project.read']})
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found'])
    const missing = await createToken({name: 'x', projectId: 'no-such-project', permissions: ['project.read']})
    expect(missing.status).toBe(404)
  })

  it('an expired token is refused with 401', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const {body: t} = await createToken({name: 'short', projectId: projectA, permissions: ['project.read'], expiresAt})
    expect((await hub.request('GET', '/api/v1/auth/me', {token: t.token})).status).toBe(200)
    offset = 2 * 3_600_000
    try {
      const res = await hub.request('GET', '/api/v1/auth/me', {token: t.token})
      expect([res.status, res.body.error.code]).toEqual([401, 'unauthorized'])
      const listed = await hub.request('GET', '/api/v1/auth/tokens', {token: alice.token})
      expect(listed.body.tokens.find((x: {id: string}) => x.id === t.id).status).toBe('expired')
    } finally {
      offset = 0
    }
  })

  it('revoke takes effect at once, is idempotent, and is limited to the owner or a system admin', async () => {
    const {body: t} = await createToken({name: 'gone', projectId: projectA, permissions: ['project.read']})
    expect((await hub.request('DELETE', `/api/v1/auth/tokens/${t.id}`, {token: bob.token})).status).toBe(404)
    expect((await hub.request('GET', '/api/v1/auth/me', {token: t.token})).status).toBe(200)

    const res = await hub.request('DELETE', `/api/v1/auth/tokens/${t.id}`, {token: alice.token})
    expect(res.status).toBe(200)
    expect(res.body.token).toMatchObject({id: t.id, status: 'revoked'})
    expect(res.body.token.revokedAt).not.toBeNull()
    expect(res.body.token).not.toHaveProperty('token')

    const use = await hub.request('GET', '/api/v1/auth/me', {token: t.token})
    expect([use.status, use.body.error.code]).toEqual([401, 'unauthorized'])
    const again = await hub.request('DELETE', `/api/v1/auth/tokens/${t.id}`, {token: alice.token})
    expect([again.status, again.body.token.revokedAt]).toEqual([200, res.body.token.revokedAt])

    const {body: t2} = await createToken({name: 'admin-revokes', projectId: projectA, permissions: ['project.read']})
    expect((await hub.request('DELETE', `/api/v1/auth/tokens/${t2.id}`, {token: hub.devToken})).status).toBe(200)
    expect((await hub.request('GET', '/api/v1/auth/me', {token: t2.token})).status).toBe(401)
  })
})
