import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

describeEachDialect('users (system admin routes) and suspension', (dialect) => {
  let hub: TestHub
  let alice: TestUser
  let bob: TestUser

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    alice = await createUser(hub, {email: 'alice@example.test'})
    bob = await createUser(hub, {email: 'bob@example.test'})
  })
  afterAll(() => hub?.dispose())

  it('a system admin lists users with their public fields', async () => {
    const res = await hub.request('GET', '/api/v1/users')
    expect(res.status).toBe(200)
    const a = res.body.users.find((u: {id: string}) => u.id === alice.user.id)
    expect(a).toEqual({
      id: alice.user.id,
      email: 'alice@example.test',
      displayName: 'alice',
      status: 'active',
      systemAdmin: false,
      hubRole: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      lastLoginAt: null,
    })
    expect(res.body.users.map((u: {id: string}) => u.id)).toContain('dev-user')
  })

  it('non-admins get 403 on the admin routes but may read themselves', async () => {
    for (const [method, url, body] of [
      ['GET', '/api/v1/users', undefined],
      ['GET', `/api/v1/users/${bob.user.id}`, undefined],
      ['PATCH', `/api/v1/users/${bob.user.id}`, {status: 'suspended'}],
    ] as const) {
      const res = await hub.request(method, url, {token: alice.token, body})
      expect([res.status, res.body.error.code], `${method} ${url}`).toEqual([403, 'forbidden'])
    }
    const self = await hub.request('GET', `/api/v1/users/${alice.user.id}`, {token: alice.token})
    expect([self.status, self.body.user.email]).toEqual([200, 'alice@example.test'])
  })

  it('suspending a user refuses all its credentials with 403 user_suspended; reactivating restores them', async () => {
    const {body: project} = await hub.request('POST', '/api/v1/projects/register', {token: bob.token, body: {name: 'bobs'}})
    const {body: pat} = await hub.request('POST', '/api/v1/auth/tokens', {token: bob.token, body: {name: 't', projectId: project.project.id, permissions: ['project.read']}})
    expect(pat.token).toBeDefined()

    const suspended = await hub.request('PATCH', `/api/v1/users/${bob.user.id}`, {body: {status: 'suspended'}})
    expect(suspended.status).toBe(200)
    expect(suspended.body.user).toMatchObject({id: bob.user.id, status: 'suspended'})

    for (const token of [bob.token, pat.token]) {
      const res = await hub.request('GET', '/api/v1/auth/me', {token})
      expect([res.status, res.body.error.code]).toEqual([403, 'user_suspended'])
      expect((await hub.request('GET', `/api/v1/projects/${project.project.id}`, {token})).status).toBe(403)
    }

    const reactivated = await hub.request('PATCH', `/api/v1/users/${bob.user.id}`, {body: {status: 'active'}})
    expect(reactivated.body.user.status).toBe('active')
    for (const token of [bob.token, pat.token]) expect((await hub.request('GET', '/api/v1/auth/me', {token})).status).toBe(200)
  })

  it('granting system admin takes effect on the next request', async () => {
    const carol = await createUser(hub)
    expect((await hub.request('GET', '/api/v1/users', {token: carol.token})).status).toBe(403)
    const res = await hub.request('PATCH', `/api/v1/users/${carol.user.id}`, {body: {systemAdmin: true}})
    expect(res.body.user.systemAdmin).toBe(true)
    expect((await hub.request('GET', '/api/v1/auth/me', {token: carol.token})).body.systemAdmin).toBe(true)
    expect((await hub.request('GET', '/api/v1/users', {token: carol.token})).status).toBe(200)
  })

  it('an admin cannot suspend or demote itself (409 conflict); unknown users are 404; bad bodies 400', async () => {
    for (const body of [{status: 'suspended'}, {systemAdmin: false}]) {
      const res = await hub.request('PATCH', '/api/v1/users/dev-user', {body})
      expect([res.status, res.body.error.code]).toEqual([409, 'conflict'])
    }
    expect((await hub.request('PATCH', '/api/v1/users/no-such-user', {body: {status: 'active'}})).status).toBe(404)
    expect((await hub.request('GET', '/api/v1/users/no-such-user')).status).toBe(404)
    const bad = await hub.request('PATCH', `/api/v1/users/${alice.user.id}`, {body: {status: 'banned'}})
    expect([bad.status, bad.body.error.code, bad.body.error.details.fields[0].path]).toEqual([400, 'validation_error', 'body.status'])
  })
})
