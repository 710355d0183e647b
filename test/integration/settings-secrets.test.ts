import {afterEach, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'

/** Project and user secrets, and `agent_secrets.user_scope_only` (403 secret_scope_restricted). */
describeEachDialect('settings: project secrets and agent_secrets.user_scope_only', (dialect) => {
  let hub: FakeBrokerHub | undefined
  afterEach(async () => {
    await hub?.dispose()
    hub = undefined
  })

  it('values are stored encrypted and never listed; agent project-scope writes are refused while user_scope_only is on', async () => {
    hub = await startFakeBrokerHub(dialect)
    const projectId = (await hub.request('GET', '/api/v1/projects')).body.projects[0].id
    const put = (key: string, body: object, token?: string) => hub!.request('PUT', `/api/v1/projects/${projectId}/secrets/${key}`, {body, ...(token && {token})})
    const user = await put('API_KEY', {value: 'plain-user-value'})
    expect(user.status).toBe(200)
    expect(user.body.secret).toMatchObject({key: 'API_KEY', scope: 'project', userId: null, writtenBy: {kind: 'user', id: 'dev-user'}})
    const listed = await hub.request('GET', `/api/v1/projects/${projectId}/secrets`)
    expect(JSON.stringify(listed.body)).not.toContain('plain-user-value')
    expect(listed.body.secrets.map((s: {key: string}) => s.key)).toEqual(['API_KEY'])
    const stored = await hub.store.projectSecrets.list(projectId, null)
    expect(stored[0].valueEnc).not.toContain('plain-user-value')

    const created = await hub.request('POST', '/api/v1/agents', {body: {name: 'a1', projectId}})
    expect(created.status).toBe(201)
    const agentToken = hub.tokenOf(created.body.agent.id)
    expect((await put('FROM_AGENT', {value: 'x'}, agentToken)).status).toBe(200)

    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {agent_secrets: {user_scope_only: true}}})).status).toBe(200)
    for (const body of [{value: 'y'}, {value: 'y', scope: 'project'}, {value: 'y', scope: ''}]) {
      const r = await put('FROM_AGENT', body, agentToken)
      expect(r.status, JSON.stringify(body)).toBe(403)
      expect(r.body.error.code).toBe('secret_scope_restricted')
    }
    const del = await hub.request('DELETE', `/api/v1/projects/${projectId}/secrets/FROM_AGENT`, {token: agentToken})
    expect(del.body.error.code).toBe('secret_scope_restricted')
    const userScope = await put('MINE', {value: 'z', scope: 'user'}, agentToken)
    expect(userScope.status).toBe(200)
    expect(userScope.body.secret).toMatchObject({scope: 'user', userId: 'dev-user', writtenBy: {kind: 'agent'}})
    // User-originated project writes are unaffected; existing project secrets are kept.
    expect((await put('API_KEY', {value: 'v2'})).status).toBe(200)
    const keys = (await hub.request('GET', `/api/v1/projects/${projectId}/secrets`)).body.secrets.map((s: {key: string; scope: string}) => `${s.key}:${s.scope}`)
    expect(keys).toEqual(['API_KEY:project', 'FROM_AGENT:project', 'MINE:user'])
    expect((await hub.request('DELETE', `/api/v1/projects/${projectId}/secrets/MINE?scope=user`, {token: agentToken})).body).toEqual({deleted: true})
    expect((await put('bad key!', {value: 'x'})).status).toBe(400)
  })
})
