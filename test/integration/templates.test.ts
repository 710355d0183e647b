import {createHash} from 'node:crypto'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

const file = (path: string, text: string, sha?: string) => ({path, content: Buffer.from(text).toString('base64'), sha256: sha ?? createHash('sha256').update(text).digest('hex')})

/** Templates: upload with a SHA-256 manifest, versions, scope rules, visibility; agents from them. */
describeEachDialect('templates', (dialect) => {
  let hub: FakeBrokerHub
  let projectId: string
  let member: TestUser
  let stranger: TestUser

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'tpl'}})).body.project.id
    member = await createUser(hub)
    stranger = await createUser(hub)
    await hub.store.projects.setMember(projectId, member.user.id, 'member', iso(new Date()))
  })
  afterAll(() => hub?.dispose())

  const upload = (body: Record<string, unknown>, token?: string | null) => hub.request('POST', '/api/v1/templates', {body, ...(token !== undefined && {token})})

  it('upload answers 201 with the template, version 1 and its sorted manifest; a second upload is version 2', async () => {
    const r = await upload({name: 'reviewer', projectId, description: 'reviews code', files: [file('prompts/system.md', 'Be kind.\n'), file('README.md', '# r\n')]})
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({created: true, template: {name: 'reviewer', projectId, description: 'reviews code', currentVersion: 1}, version: {seq: 1}})
    expect(r.body.version.manifest).toEqual([
      {path: 'README.md', size: 4, sha256: createHash('sha256').update('# r\n').digest('hex')},
      {path: 'prompts/system.md', size: 9, sha256: createHash('sha256').update('Be kind.\n').digest('hex')},
    ])
    const v2 = await upload({name: 'reviewer', projectId: 'tpl', files: [file('README.md', '# r2\n')]}, member.token)
    expect(v2.status).toBe(201)
    expect(v2.body).toMatchObject({created: false, template: {id: r.body.template.id, currentVersion: 2}, version: {seq: 2, createdBy: member.user.id}})

    const got = await hub.request('GET', `/api/v1/templates/${r.body.template.id}`)
    expect(got.status).toBe(200)
    expect(got.body.template).toMatchObject({id: r.body.template.id, currentVersion: 2})
    expect(got.body.versions.map((v: {seq: number}) => v.seq).sort()).toEqual([1, 2])
  })

  it('an agent cannot create or change a template (it is laid into other agents\' work trees); it can read them', async () => {
    const created = await hub.request('POST', '/api/v1/agents', {body: {name: 'tpl-writer', projectId, harnessConfig: 'shell'}})
    const rec = (await hub.store.agents.get(created.body.agent.id))!
    const {token} = await hub.services.agentTokens.mint(rec)
    const r = await upload({name: 'from-agent', projectId, files: [file('CLAUDE.md', 'obey me\n')]}, token)
    expect(r.status).toBe(403)
    expect(r.body.error).toMatchObject({code: 'forbidden', message: expect.stringMatching(/agents cannot create or change templates/)})
    expect((await hub.request('GET', '/api/v1/templates')).body.templates.map((t: {name: string}) => t.name)).not.toContain('from-agent')
    expect((await hub.request('GET', '/api/v1/templates', {token})).status).toBe(200)
  })

  it('a SHA-256 that does not match is 400 sha256_mismatch; bad paths, duplicate paths, bad base64 and names are 400', async () => {
    const mismatch = await upload({name: 'bad', projectId, files: [file('a.txt', 'one', createHash('sha256').update('two').digest('hex'))]})
    expect(mismatch.status).toBe(400)
    expect(mismatch.body.error).toMatchObject({code: 'sha256_mismatch', details: {path: 'a.txt'}})
    // A template is laid into a work tree: a .git segment of any case would write into a repository.
    for (const path of ['../x', '/etc/passwd', 'a/../../b', 'a//b', './a', 'a\\b', '.git/config', '.GIT/hooks/pre-commit', 'src/.Git']) {
      const r = await upload({name: 'bad', projectId, files: [file(path, 'x')]})
      expect(r.status, path).toBe(400)
      expect(r.body.error.code).toBe('validation_error')
    }
    expect((await upload({name: 'bad', projectId, files: [file('a', 'x'), file('a', 'x')]})).status).toBe(400)
    expect((await upload({name: 'bad', projectId, files: [{...file('a', 'x'), content: '***'}]})).status).toBe(400)
    expect((await upload({name: 'bad', projectId, files: []})).status).toBe(400)
    expect((await upload({name: 'no spaces', projectId, files: [file('a', 'x')]})).status).toBe(400)
    expect((await upload({name: 'bad', projectId, files: [{path: 'a', content: '', sha256: 'nothex'}]})).status).toBe(400)
    // Nothing was stored by the refused uploads.
    expect((await hub.request('GET', '/api/v1/templates')).body.templates.map((t: {name: string}) => t.name)).not.toContain('bad')
  })

  it('hub-wide templates need a system admin; project templates need the project; a non-member gets 404', async () => {
    const hubWide = await upload({name: 'house-style', files: [file('style.md', 'tabs\n')]})
    expect(hubWide.status).toBe(201)
    expect(hubWide.body.template.projectId).toBe(null)
    const refused = await upload({name: 'house-style', files: [file('style.md', 'spaces\n')]}, member.token)
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('forbidden')
    expect((await upload({name: 'sneaky', projectId, files: [file('a', 'x')]}, stranger.token)).status).toBe(404)
    expect((await upload({name: 'anon', files: [file('a', 'x')]}, null)).status).toBe(401)
  })

  it('list shows hub-wide templates to everyone and project templates to the project; get follows the same rule', async () => {
    const names = async (token: string, q = '') => (await hub.request('GET', `/api/v1/templates${q}`, {token})).body.templates.map((t: {name: string}) => t.name).sort()
    expect(await names(hub.devToken)).toEqual(expect.arrayContaining(['house-style', 'reviewer']))
    expect(await names(member.token)).toEqual(expect.arrayContaining(['house-style', 'reviewer']))
    const strangers = await names(stranger.token)
    expect(strangers).toContain('house-style')
    expect(strangers).not.toContain('reviewer')
    // A project's list holds its own templates and the hub-wide ones it may use.
    expect(await names(member.token, `?projectId=${projectId}`)).toEqual(['house-style', 'reviewer'])
    expect((await hub.request('GET', `/api/v1/templates?projectId=${projectId}`, {token: stranger.token})).status).toBe(404)

    const reviewer = (await hub.request('GET', `/api/v1/templates?projectId=${projectId}`)).body.templates.find((t: {name: string}) => t.name === 'reviewer')
    expect((await hub.request('GET', `/api/v1/templates/${reviewer.id}`, {token: stranger.token})).status).toBe(404)
    const houseStyle = (await hub.request('GET', '/api/v1/templates')).body.templates.find((t: {name: string}) => t.name === 'house-style')
    expect((await hub.request('GET', `/api/v1/templates/${houseStyle.id}`, {token: stranger.token})).status).toBe(200)
    expect((await hub.request('GET', '/api/v1/templates/no-such')).status).toBe(404)
  })

  it('an agent is created from a template by name (project, then hub-wide) or ID; an unknown template is 400', async () => {
    const fromProject = await hub.request('POST', '/api/v1/agents', {body: {name: 'templated', projectId, template: 'reviewer'}})
    expect(fromProject.status).toBe(201)
    const reviewer = (await hub.request('GET', `/api/v1/templates?projectId=${projectId}`)).body.templates.find((t: {name: string}) => t.name === 'reviewer')
    expect(fromProject.body.agent.template).toBe(reviewer.id)
    const fromHub = await hub.request('POST', '/api/v1/agents', {body: {name: 'styled', projectId, template: 'house-style'}})
    expect(fromHub.status).toBe(201)
    expect(fromHub.body.agent.template).not.toBe(null)
    const byId = await hub.request('POST', '/api/v1/agents', {body: {name: 'by-id', projectId, template: reviewer.id}})
    expect(byId.body.agent.template).toBe(reviewer.id)
    const unknown = await hub.request('POST', '/api/v1/agents', {body: {name: 'nope', projectId, template: 'no-such-template'}})
    expect(unknown.status).toBe(400)
    expect(unknown.body.error.details.fields[0].path).toBe('template')
    // Another project's template is not usable here.
    const other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'tpl-other'}})).body.project.id
    expect((await hub.request('POST', '/api/v1/agents', {body: {name: 'cross', projectId: other, template: reviewer.id}})).status).toBe(400)
  })
})
