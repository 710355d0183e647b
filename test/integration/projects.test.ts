import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

describeEachDialect('projects (groves)', (dialect) => {
  let hub: TestHub
  let owner: TestUser
  let admin: TestUser
  let member: TestUser
  let outsider: TestUser

  const req = (who: TestUser | string, method: string, url: string, body?: unknown) =>
    hub.request(method, url, {token: typeof who === 'string' ? who : who.token, body})
  const ids = (list: Array<{id: string}>) => list.map((p) => p.id).sort()

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    owner = await createUser(hub, {email: 'owner@example.test'})
    admin = await createUser(hub, {email: 'admin@example.test'})
    member = await createUser(hub, {email: 'member@example.test'})
    outsider = await createUser(hub, {email: 'outsider@example.test'})
  })
  afterAll(() => hub?.dispose())

  /** A project owned by `owner` with `admin` as admin and `member` as member. */
  async function team(name: string, gitRemote?: string) {
    const res = await req(owner, 'POST', '/api/v1/projects/register', {name, ...(gitRemote && {gitRemote})})
    expect(res.status).toBe(201)
    const id = res.body.project.id as string
    expect((await req(owner, 'POST', `/api/v1/projects/${id}/members`, {email: 'admin@example.test', role: 'admin'})).status).toBe(200)
    expect((await req(owner, 'POST', `/api/v1/projects/${id}/members`, {userId: member.user.id, role: 'member'})).status).toBe(200)
    return id
  }

  it('register answers 201 created: true with the caller as owner and the remote normalised', async () => {
    const res = await req(owner, 'POST', '/api/v1/projects/register', {name: 'Demo App', gitRemote: 'git@github.com:Acme/Demo.git', description: 'd'})
    expect(res.status).toBe(201)
    expect(res.body.created).toBe(true)
    expect(res.body.project).toMatchObject({name: 'Demo App', slug: 'demo-app', gitRemote: 'github.com/Acme/Demo', cloneUrl: 'git@github.com:Acme/Demo.git', description: 'd', createdBy: owner.user.id, role: 'owner'})
    expect(res.body.project.id).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('register links idempotently on the normalised remote, whatever its spelling', async () => {
    const first = await req(owner, 'POST', '/api/v1/projects/register', {name: 'linkme', gitRemote: 'https://github.com/Acme/Linked'})
    expect(first.status).toBe(201)
    for (const spelling of ['git@github.com:Acme/Linked.git', 'ssh://git@GITHUB.com/Acme/Linked.git', 'https://github.com/Acme/Linked/']) {
      const again = await req(owner, 'POST', '/api/v1/projects/register', {name: 'another name', gitRemote: spelling})
      expect(again.status, spelling).toBe(200)
      expect(again.body.created).toBe(false)
      expect(again.body.project.id).toBe(first.body.project.id)
      expect(again.body.project.name).toBe('linkme')
    }
  })

  it('the URL to clone is kept as registered but for credentials; a link fills it in for a project without one', async () => {
    const res = await req(owner, 'POST', '/api/v1/projects/register', {name: 'tokened', gitRemote: 'https://x-token:ghp_s3cr3t@github.com/Acme/Tokened.git'})
    expect(res.body.project).toMatchObject({gitRemote: 'github.com/Acme/Tokened', cloneUrl: 'https://github.com/Acme/Tokened.git'})
    expect(JSON.stringify(res.body)).not.toContain('ghp_s3cr3t')
    // A project registered before svc kept the URL: the next registration of its remote records it.
    await hub.store.projects.update(res.body.project.id, {cloneUrl: null}, new Date().toISOString())
    const again = await req(owner, 'POST', '/api/v1/projects/register', {name: 'tokened', gitRemote: 'git@github.com:Acme/Tokened.git'})
    expect(again.body).toMatchObject({created: false, project: {id: res.body.project.id, cloneUrl: 'git@github.com:Acme/Tokened.git'}})
    const patched = await req(owner, 'PATCH', `/api/v1/projects/${res.body.project.id}`, {gitRemote: 'https://gitlab.com/acme/moved.git'})
    expect(patched.body.project).toMatchObject({gitRemote: 'gitlab.com/acme/moved', cloneUrl: 'https://gitlab.com/acme/moved.git'})
    const cleared = await req(owner, 'PATCH', `/api/v1/projects/${res.body.project.id}`, {gitRemote: null})
    expect(cleared.body.project).toMatchObject({gitRemote: null, cloneUrl: null})
  })

  it('registering a remote that belongs to a project the caller cannot read is 409 project_exists', async () => {
    await req(owner, 'POST', '/api/v1/projects/register', {name: 'private', gitRemote: 'github.com/Acme/Private'})
    const res = await req(outsider, 'POST', '/api/v1/projects/register', {name: 'mine', gitRemote: 'git@github.com:Acme/Private.git'})
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe('project_exists')
    expect(JSON.stringify(res.body)).not.toContain(owner.user.id)
  })

  it('a member registering the same remote links to it with its own role', async () => {
    const id = await team('shared', 'github.com/Acme/Shared')
    const res = await req(member, 'POST', '/api/v1/projects/register', {name: 'x', gitRemote: 'https://github.com/Acme/Shared.git'})
    expect([res.status, res.body.created, res.body.project.id, res.body.project.role]).toEqual([200, false, id, 'member'])
  })

  it('register refuses an invalid remote and an unknown field with 400 validation_error', async () => {
    const bad = await req(owner, 'POST', '/api/v1/projects/register', {name: 'x', gitRemote: 'not a remote'})
    expect([bad.status, bad.body.error.code, bad.body.error.details.fields[0].path]).toEqual([400, 'validation_error', 'gitRemote'])
    const unknown = await req(owner, 'POST', '/api/v1/projects/register', {name: 'x', owner: 'me'})
    expect([unknown.status, unknown.body.error.details.fields]).toEqual([400, [{path: 'body.owner', message: 'is not a known field'}]])
  })

  it('concurrent registrations of one remote make one project; the others link to it', async () => {
    const results = await Promise.all(
      ['git@github.com:Acme/Race.git', 'https://github.com/Acme/Race', 'ssh://git@github.com/Acme/Race.git', 'github.com/Acme/Race'].map((gitRemote) =>
        req(owner, 'POST', '/api/v1/projects/register', {name: 'race', gitRemote}),
      ),
    )
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 201])
    expect(new Set(results.map((r) => r.body.project.id)).size).toBe(1)
  })

  it('concurrent registrations of one name get distinct slugs', async () => {
    const results = await Promise.all([1, 2, 3].map(() => req(owner, 'POST', '/api/v1/projects/register', {name: 'Crowd'})))
    expect(results.map((r) => r.status)).toEqual([201, 201, 201])
    expect(new Set(results.map((r) => r.body.project.slug)).size).toBe(3)
  })

  it('same names get distinct slugs', async () => {
    const a = await req(owner, 'POST', '/api/v1/projects/register', {name: 'Twin'})
    const b = await req(owner, 'POST', '/api/v1/projects/register', {name: 'Twin'})
    expect(a.body.project.slug).toBe('twin')
    expect(b.body.project.slug).toBe('twin-2')
  })

  it('list shows only accessible projects; a system admin sees all, with role null where not a member', async () => {
    const id = await team('listed')
    const own = await req(outsider, 'POST', '/api/v1/projects/register', {name: 'outsiders-own'})
    const forMember = await req(member, 'GET', '/api/v1/projects')
    expect(forMember.status).toBe(200)
    expect(forMember.body.projects.map((p: {id: string}) => p.id)).toContain(id)
    expect(forMember.body.projects.map((p: {id: string}) => p.id)).not.toContain(own.body.project.id)
    expect(forMember.body.projects.find((p: {id: string}) => p.id === id).role).toBe('member')
    const forOutsider = await req(outsider, 'GET', '/api/v1/projects')
    expect(ids(forOutsider.body.projects)).toEqual([own.body.project.id])
    const forAdmin = await req(hub.devToken, 'GET', '/api/v1/projects')
    expect(forAdmin.body.projects.map((p: {id: string}) => p.id)).toEqual(expect.arrayContaining([id, own.body.project.id]))
    expect(forAdmin.body.projects.find((p: {id: string}) => p.id === id).role).toBeNull()
  })

  it('get answers the project with statistics, by ID or slug; 404 for non-members', async () => {
    const id = await team('Stats Project')
    const byId = await req(member, 'GET', `/api/v1/projects/${id}`)
    expect(byId.status).toBe(200)
    expect(byId.body.project).toMatchObject({id, name: 'Stats Project', slug: 'stats-project', role: 'member', stats: {members: 3}})
    const bySlug = await req(member, 'GET', '/api/v1/projects/stats-project')
    expect(bySlug.body.project.id).toBe(id)
    const hidden = await req(outsider, 'GET', `/api/v1/projects/${id}`)
    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'not_found'])
    expect((await req(member, 'GET', '/api/v1/projects/no-such-project')).status).toBe(404)
  })

  it('update: owners and admins may, members get 403, outsiders 404', async () => {
    const id = await team('updatable')
    const byOwner = await req(owner, 'PATCH', `/api/v1/projects/${id}`, {name: 'Renamed', gitRemote: 'git@gitlab.com:acme/upd.git'})
    expect(byOwner.status).toBe(200)
    expect(byOwner.body.project).toMatchObject({id, name: 'Renamed', gitRemote: 'gitlab.com/acme/upd', role: 'owner'})
    const byAdmin = await req(admin, 'PATCH', `/api/v1/projects/${id}`, {description: 'by admin', gitRemote: null})
    expect(byAdmin.body.project).toMatchObject({description: 'by admin', gitRemote: null, role: 'admin'})
    const byMember = await req(member, 'PATCH', `/api/v1/projects/${id}`, {description: 'no'})
    expect([byMember.status, byMember.body.error.code]).toEqual([403, 'forbidden'])
    expect((await req(outsider, 'PATCH', `/api/v1/projects/${id}`, {description: 'no'})).status).toBe(404)
    expect((await req(owner, 'PATCH', `/api/v1/projects/${id}`, {})).status).toBe(400)
  })

  it('update to a remote another project holds is 409 conflict', async () => {
    await req(owner, 'POST', '/api/v1/projects/register', {name: 'holder', gitRemote: 'github.com/Acme/Held'})
    const id = await team('taker')
    const res = await req(owner, 'PATCH', `/api/v1/projects/${id}`, {gitRemote: 'https://github.com/Acme/Held'})
    expect([res.status, res.body.error.code]).toEqual([409, 'conflict'])
  })

  it('members: add, change, remove; only owners grant the owner role; the last owner is kept', async () => {
    const id = await team('crew')
    const listed = await req(member, 'GET', `/api/v1/projects/${id}/members`)
    expect(listed.status).toBe(200)
    // Oldest membership first, ties (two adds in one millisecond) by user ID.
    type Listed = {userId: string; email: string; role: string; createdAt: string}
    const members = listed.body.members as Listed[]
    expect(members.map((m) => [m.email, m.role]).sort()).toEqual([
      ['admin@example.test', 'admin'],
      ['member@example.test', 'member'],
      ['owner@example.test', 'owner'],
    ])
    expect(members).toEqual([...members].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.userId < b.userId ? -1 : 1)))
    // A member may not manage members.
    expect((await req(member, 'POST', `/api/v1/projects/${id}/members`, {userId: outsider.user.id, role: 'member'})).status).toBe(403)
    // A project admin adds and changes ordinary members...
    const added = await req(admin, 'POST', `/api/v1/projects/${id}/members`, {email: 'OUTSIDER@example.test', role: 'member'})
    expect(added.status).toBe(200)
    expect(added.body.members.find((m: {userId: string}) => m.userId === outsider.user.id).role).toBe('member')
    const changed = await req(admin, 'PUT', `/api/v1/projects/${id}/members/${outsider.user.id}`, {role: 'admin'})
    expect(changed.body.members.find((m: {userId: string}) => m.userId === outsider.user.id).role).toBe('admin')
    // ...but does not grant or remove the owner role.
    const grant = await req(admin, 'PUT', `/api/v1/projects/${id}/members/${member.user.id}`, {role: 'owner'})
    expect([grant.status, grant.body.error.code]).toEqual([403, 'forbidden'])
    expect((await req(admin, 'DELETE', `/api/v1/projects/${id}/members/${owner.user.id}`)).status).toBe(403)
    // The last owner can be neither demoted nor removed.
    const demote = await req(owner, 'PUT', `/api/v1/projects/${id}/members/${owner.user.id}`, {role: 'member'})
    expect([demote.status, demote.body.error.code]).toEqual([409, 'conflict'])
    const remove = await req(owner, 'DELETE', `/api/v1/projects/${id}/members/${owner.user.id}`)
    expect([remove.status, remove.body.error.code]).toEqual([409, 'conflict'])
    // With a second owner, the first may step down.
    expect((await req(owner, 'PUT', `/api/v1/projects/${id}/members/${member.user.id}`, {role: 'owner'})).status).toBe(200)
    const stepDown = await req(owner, 'PUT', `/api/v1/projects/${id}/members/${owner.user.id}`, {role: 'member'})
    expect(stepDown.status).toBe(200)
    // Removal.
    const removed = await req(member, 'DELETE', `/api/v1/projects/${id}/members/${outsider.user.id}`)
    expect(removed.status).toBe(200)
    expect(removed.body.members.map((m: {userId: string}) => m.userId)).not.toContain(outsider.user.id)
    expect((await req(outsider, 'GET', `/api/v1/projects/${id}`)).status).toBe(404)
    expect((await req(member, 'DELETE', `/api/v1/projects/${id}/members/${outsider.user.id}`)).status).toBe(404)
    // Bad role and unknown user.
    expect((await req(member, 'POST', `/api/v1/projects/${id}/members`, {userId: outsider.user.id, role: 'god'})).status).toBe(400)
    expect((await req(member, 'POST', `/api/v1/projects/${id}/members`, {email: 'nobody@example.test', role: 'member'})).status).toBe(404)
  })

  it('delete: owners only; project admins 403; outsiders 404; then gone', async () => {
    const id = await team('doomed')
    const byAdmin = await req(admin, 'DELETE', `/api/v1/projects/${id}`)
    expect([byAdmin.status, byAdmin.body.error.code]).toEqual([403, 'forbidden'])
    expect((await req(member, 'DELETE', `/api/v1/projects/${id}`)).status).toBe(403)
    const byOutsider = await req(outsider, 'DELETE', `/api/v1/projects/${id}`)
    expect([byOutsider.status, byOutsider.body.error.code]).toEqual([404, 'not_found'])
    const byOwner = await req(owner, 'DELETE', `/api/v1/projects/${id}`)
    expect([byOwner.status, byOwner.body.project.id]).toEqual([200, id])
    expect((await req(owner, 'GET', `/api/v1/projects/${id}`)).status).toBe(404)
    expect((await req(owner, 'DELETE', `/api/v1/projects/${id}`)).status).toBe(404)
  })

  it('/api/v1/groves answers the same as /api/v1/projects', async () => {
    const id = await team('grove')
    const p = await req(member, 'GET', '/api/v1/projects')
    const g = await req(member, 'GET', '/api/v1/groves')
    expect(g.status).toBe(200)
    expect(g.body).toEqual(p.body)
    expect((await req(member, 'GET', `/api/v1/groves/${id}`)).body).toEqual((await req(member, 'GET', `/api/v1/projects/${id}`)).body)
    expect((await req(outsider, 'GET', `/api/v1/groves/${id}`)).status).toBe(404)
    const reg = await req(outsider, 'POST', '/api/v1/groves/register', {name: 'via groves'})
    expect([reg.status, reg.body.created]).toEqual([201, true])
    expect((await req(outsider, 'GET', `/api/v1/projects/${reg.body.project.id}/members`)).body.members).toHaveLength(1)
    expect((await req(outsider, 'DELETE', `/api/v1/groves/${reg.body.project.id}`)).status).toBe(200)
  })
})
