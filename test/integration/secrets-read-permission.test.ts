import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Secret names are read with `project.secret_read` (spec permission registry): owners and admins
 * hold it; a member does not, nor does a user access token that does not carry it, whoever made
 * the token. Writing keeps its own rules (project scope `project.update`, user scope read access).
 */
describeEachDialect('secrets: listing needs project.secret_read', (dialect) => {
  let hub: TestHub
  let owner: TestUser
  let admin: TestUser
  let member: TestUser
  let projectId: string

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    owner = await createUser(hub)
    admin = await createUser(hub)
    member = await createUser(hub)
    projectId = (await hub.request('POST', '/api/v1/projects/register', {token: owner.token, body: {name: 'vault'}})).body.project.id
    await hub.store.projects.setMember(projectId, admin.user.id, 'admin', iso(new Date()))
    await hub.store.projects.setMember(projectId, member.user.id, 'member', iso(new Date()))
    expect((await hub.request('PUT', `/api/v1/projects/${projectId}/secrets/NAME_OF_A_SECRET`, {token: owner.token, body: {value: 'v'}})).status).toBe(200)
  })
  afterAll(() => hub?.dispose())

  const list = (token: string) => hub.request('GET', `/api/v1/projects/${projectId}/secrets`, {token})
  const tokenOf = async (user: TestUser, permissions: string[]) => {
    const r = await hub.request('POST', '/api/v1/auth/tokens', {token: user.token, body: {name: `t-${permissions.join('-')}`, projectId, permissions}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.token as string
  }

  it('owners, admins and system admins list the names', async () => {
    for (const t of [owner.token, admin.token, hub.devToken]) {
      const r = await list(t)
      expect(r.status).toBe(200)
      expect(r.body.secrets.map((s: {key: string}) => s.key)).toContain('NAME_OF_A_SECRET')
    }
  })

  it("a token with only project.read is 403 forbidden, even the owner's; with project.secret_read it lists", async () => {
    for (const t of [await tokenOf(owner, ['project.read']), await tokenOf(owner, ['project.read', 'project.update', 'agent.read'])]) {
      const r = await list(t)
      expect(r.status).toBe(403)
      expect(r.body.error).toMatchObject({code: 'forbidden', details: {permission: 'project.secret_read'}})
      expect(JSON.stringify(r.body)).not.toContain('NAME_OF_A_SECRET')
    }
    const r = await list(await tokenOf(owner, ['project.read', 'project.secret_read']))
    expect(r.status).toBe(200)
    expect(r.body.secrets.map((s: {key: string}) => s.key)).toContain('NAME_OF_A_SECRET')
  })

  it('a member is 403 forbidden (it still writes its own user-scope secrets); a non-member 404', async () => {
    const r = await list(member.token)
    expect([r.status, r.body.error.code]).toEqual([403, 'forbidden'])
    expect((await hub.request('PUT', `/api/v1/projects/${projectId}/secrets/MINE`, {token: member.token, body: {value: 'm', scope: 'user'}})).status).toBe(200)
    const outsider = await createUser(hub)
    expect((await list(outsider.token)).status).toBe(404)
  })
})
