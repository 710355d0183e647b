import {createHash} from 'node:crypto'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {ADMIN_PERMISSIONS} from '../../src/domain/authz/hub-roles.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

const file = (path: string, text: string) => ({path, content: Buffer.from(text).toString('base64'), sha256: createHash('sha256').update(text).digest('hex')})

/**
 * Built-in Hub roles: a system admin assigns them with PATCH /api/v1/users/:id `hubRole`; the
 * role's admin permissions show in GET /api/v1/admin/status (interactive credentials only) and
 * gate the routes: a template_admin manages hub-wide templates and nothing else admin.
 */
describeEachDialect('hub roles', (dialect) => {
  let hub: TestHub
  let admin: TestUser
  let carol: TestUser
  let plain: TestUser
  let projectId: string

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    admin = await createUser(hub, {systemAdmin: true})
    carol = await createUser(hub)
    plain = await createUser(hub)
    projectId = (await hub.request('POST', '/api/v1/projects/register', {token: carol.token, body: {name: 'roles'}})).body.project.id
  })
  afterAll(() => hub?.dispose())

  const setRole = (id: string, hubRole: unknown, token = admin.token) => hub.request('PATCH', `/api/v1/users/${id}`, {token, body: {hubRole}})
  const permissions = async (token: string) => {
    const r = await hub.request('GET', '/api/v1/admin/status', {token})
    expect(r.status).toBe(200)
    return r.body.permissions as string[]
  }
  const uploadHub = (name: string, token: string) => hub.request('POST', '/api/v1/templates', {token, body: {name, files: [file('a.md', `${name}\n`)]}})

  it('a system admin sets and clears a Hub role; the user and the store carry it', async () => {
    const set = await setRole(carol.user.id, 'template_admin')
    expect(set.status).toBe(200)
    expect(set.body.user).toMatchObject({id: carol.user.id, hubRole: 'template_admin', systemAdmin: false})
    expect((await hub.store.users.get(carol.user.id))!.hubRole).toBe('template_admin')
    // A user reads its own role.
    expect((await hub.request('GET', `/api/v1/users/${carol.user.id}`, {token: carol.token})).body.user.hubRole).toBe('template_admin')

    const cleared = await setRole(carol.user.id, null)
    expect(cleared.status).toBe(200)
    expect(cleared.body.user.hubRole).toBe(null)
    expect((await hub.store.users.get(carol.user.id))!.hubRole).toBe(null)
  })

  it('an unknown role is 400 validation_error and changes nothing; a non-admin (even a template_admin) gets 403', async () => {
    expect((await setRole(carol.user.id, 'template_admin')).status).toBe(200)
    for (const bad of ['root', 'TEMPLATE_ADMIN', '', 7]) {
      const r = await setRole(plain.user.id, bad)
      expect(r.status, String(bad)).toBe(400)
      expect(r.body.error.code).toBe('validation_error')
    }
    expect((await hub.store.users.get(plain.user.id))!.hubRole).toBe(null)

    const byMember = await setRole(plain.user.id, 'template_admin', plain.token)
    expect(byMember.status).toBe(403)
    expect(byMember.body.error.code).toBe('forbidden')
    // The role does not let its holder hand itself or others more roles.
    const byTemplateAdmin = await setRole(plain.user.id, 'template_admin', carol.token)
    expect(byTemplateAdmin.status).toBe(403)
    expect((await hub.store.users.get(plain.user.id))!.hubRole).toBe(null)
  })

  it('admin status lists every admin permission for a system admin, the role\'s for a template_admin, none for others', async () => {
    expect((await setRole(carol.user.id, 'template_admin')).status).toBe(200)
    expect(await permissions(admin.token)).toEqual([...ADMIN_PERMISSIONS])
    expect(await permissions(hub.devToken)).toEqual([...ADMIN_PERMISSIONS])
    expect(await permissions(carol.token)).toEqual(['admin.status.read', 'admin.templates.manage'])
    expect(await permissions(plain.token)).toEqual([])
    // The role takes effect on the next request, without signing in again.
    expect((await setRole(carol.user.id, null)).status).toBe(200)
    expect(await permissions(carol.token)).toEqual([])
    expect((await setRole(carol.user.id, 'template_admin')).status).toBe(200)
    expect(await permissions(carol.token)).toEqual(['admin.status.read', 'admin.templates.manage'])
  })

  it('a user access token holds no admin permission, whatever the role of its user', async () => {
    expect((await setRole(carol.user.id, 'template_admin')).status).toBe(200)
    const t = await hub.request('POST', '/api/v1/auth/tokens', {token: carol.token, body: {name: 'ci', projectId, permissions: ['project.read']}})
    expect(t.status).toBe(201)
    const status = await hub.request('GET', '/api/v1/admin/status', {token: t.body.token})
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({credentialKind: 'user_access_token', permissions: []})
    const upload = await uploadHub('from-token', t.body.token)
    expect(upload.status).toBe(403)
    expect(upload.body.error.code).toBe('forbidden')
  })

  it('a template_admin manages hub-wide templates; a plain user may not; an admin still may', async () => {
    expect((await setRole(carol.user.id, 'template_admin')).status).toBe(200)
    const created = await uploadHub('house-style', carol.token)
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({created: true, template: {name: 'house-style', projectId: null, createdBy: carol.user.id}})
    const v2 = await uploadHub('house-style', carol.token)
    expect(v2.status).toBe(201)
    expect(v2.body).toMatchObject({created: false, version: {seq: 2}})

    const refused = await uploadHub('house-style', plain.token)
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('forbidden')
    expect((await uploadHub('plain-made', plain.token)).status).toBe(403)

    expect((await uploadHub('house-style', admin.token)).body).toMatchObject({created: false, version: {seq: 3}})
    // Losing the role takes hub template management away.
    expect((await setRole(carol.user.id, null)).status).toBe(200)
    expect((await uploadHub('house-style', carol.token)).status).toBe(403)
    const names = (await hub.request('GET', '/api/v1/templates', {token: admin.token})).body.templates.map((t: {name: string}) => t.name)
    expect(names).toContain('house-style')
    expect(names).not.toContain('plain-made')
  })

  it('a template_admin gets 403 with the usual codes on server-config, maintenance, profiling, users and delegation adoption', async () => {
    expect((await setRole(carol.user.id, 'template_admin')).status).toBe(200)
    const calls: Array<[string, string, unknown, string]> = [
      ['GET', '/api/v1/admin/server-config', undefined, 'not_system_admin'],
      ['PUT', '/api/v1/admin/server-config', {}, 'not_system_admin'],
      ['GET', '/api/v1/admin/maintenance', undefined, 'not_system_admin'],
      ['PUT', '/api/v1/admin/maintenance', {enabled: true}, 'not_system_admin'],
      ['GET', '/api/v1/admin/profiling', undefined, 'not_system_admin'],
      ['PUT', '/api/v1/admin/profiling', {readiness_marks: true}, 'not_system_admin'],
      ['GET', '/api/v1/users', undefined, 'forbidden'],
      ['PATCH', `/api/v1/users/${plain.user.id}`, {systemAdmin: true}, 'forbidden'],
      ['GET', '/api/v1/admin/delegation-adoption', undefined, 'not_system_admin'],
    ]
    for (const [method, url, body, code] of calls) {
      const r = await hub.request(method, url, {token: carol.token, ...(body !== undefined && {body})})
      expect(r.status, `${method} ${url}`).toBe(403)
      expect(r.body.error.code, `${method} ${url}`).toBe(code)
    }
    // Nothing was changed by the refused calls.
    expect((await hub.request('GET', '/api/v1/admin/maintenance', {token: admin.token})).body.enabled).toBe(false)
    expect((await hub.store.users.get(plain.user.id))!.systemAdmin).toBe(false)
  })
})
