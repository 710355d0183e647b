import {Writable} from 'node:stream'
import pino from 'pino'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {AppError} from '../../src/api/app-error.js'
import type {CallContext} from '../../src/domain/authz/context.js'
import {createWalkGuard} from '../../src/domain/delegation/walk-guard.js'
import {PROVENANCE_REQUIRED} from '../../src/domain/delegation/role-scopes.js'
import {UNRECORDED_DENIAL} from '../../src/domain/delegation/types.js'
import {POLICY_V1} from '../../src/domain/delegation/policy-v1.js'
import {iso} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'
import {walkFixture} from '../helpers/walk-fixture.js'

/**
 * The permission walk over real HTTP routes: a version-0 hop denies the provenance-requiring
 * permissions with the spec's details and no edge or ancestor ID; a recorded chain allows;
 * revoking an ancestor (edge, deletion, suspended root user) denies descendants at once, and
 * restoring the user restores them; an agent with an unrecorded hop cannot give a child an
 * assign-mode service account.
 */
describeEachDialect('delegation walk', (dialect) => {
  let hub: FakeBrokerHub
  let projectId: string
  let member: TestUser
  let f: ReturnType<typeof walkFixture>
  const logLines: string[] = []

  beforeAll(async () => {
    // Debug level, captured: SPEC Events 6 names the delegate of an unrecorded hop in the log.
    const sink = new Writable({write: (chunk, _enc, cb) => (logLines.push(String(chunk)), cb())})
    hub = await startFakeBrokerHub(dialect, {logger: pino({level: 'debug'}, sink)})
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'walk'}})).body.project.id
    member = await createUser(hub)
    await hub.store.projects.setMember(projectId, member.user.id, 'member', iso(new Date()))
    f = walkFixture(hub, projectId)
  })
  afterAll(() => hub?.dispose())

  const expectUnrecordedDenial = (r: {status: number; body: any}, hidden: string[]) => {
    expect(r.status, JSON.stringify(r.body)).toBe(403)
    expect(r.body.error.code).toBe('forbidden')
    expect(r.body.error.details).toMatchObject(UNRECORDED_DENIAL)
    expect(r.body.error.details.remediation_path).toBe('/api/v1/admin/delegation-adoption')
    for (const id of hidden) expect(JSON.stringify(r.body)).not.toContain(id)
  }

  it('an unrecorded own hop denies the provenance permissions with the details, and allows the rest', async () => {
    const id = await f.create('legacy', hub.devToken)
    await f.unrecord(id)
    const token = hub.tokenOf(id)
    const hidden = (await f.chainIds([])).concat((await hub.store.delegationEdges.forAgent(id)).map((e) => e.id))
    // The existing message is kept; only the details grow.
    const list = await f.listSecrets(token)
    expectUnrecordedDenial(list, hidden)
    expect(list.body.error.message).toBe('not allowed: project.secret_read on project')
    expectUnrecordedDenial(await hub.request('PUT', `/api/v1/projects/${projectId}/secrets/K`, {body: {value: 'v'}, token}), hidden)
    // Permissions that need no provenance pass the unrecorded hop.
    expect((await hub.request('GET', `/api/v1/agents?projectId=${projectId}`, {token})).body.agents.length).toBeGreaterThan(0)
    expect((await f.create('legacy-child', token)).length).toBeGreaterThan(0)
    expect(logLines.some((l) => l.includes('delegation walk denied: unrecorded hop') && l.includes(id))).toBe(true)
  })

  it('an active edge in another project does not break the chain: the walk reads the edge in the agent\'s project, as the planner does', async () => {
    const parent = await f.create('foreign-edge-parent', hub.devToken)
    const child = await f.create('foreign-edge-child', hub.tokenOf(parent))
    const other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'walk-other'}})).body.project.id as string
    // One extra active edge per agent, scoped to another project ("exactly one active edge in its project" still holds).
    for (const id of [parent, child]) {
      const [edge] = await hub.store.delegationEdges.activeFor(id)
      await hub.store.delegationEdges.insert({...edge, id: newId(), projectId: other, createdAt: iso(new Date())})
      expect(await hub.store.delegationEdges.activeFor(id)).toHaveLength(2)
    }
    const walk = createWalkGuard(hub)
    const ctx: CallContext = {principal: {kind: 'agent', id: child, projectId}, credentialKind: 'agent', requestId: 't'}
    expect(await walk.decide(ctx, 'secret.use')).toMatchObject({allowed: true})
    // A child the parent creates now is bounded by the parent's in-project ceiling, not by nothing.
    const late = await f.create('foreign-edge-late', hub.tokenOf(parent))
    expect(await walk.decide({...ctx, principal: {kind: 'agent', id: late, projectId}}, 'secret.use')).toMatchObject({allowed: true})
    // Two active edges in the agent's own project are duplicates.
    const [own] = (await hub.store.delegationEdges.activeFor(child)).filter((e) => e.projectId === projectId)
    await hub.store.delegationEdges.insert({...own, id: newId(), createdAt: iso(new Date())})
    expect(await walk.decide(ctx, 'project.read')).toMatchObject({allowed: false, reason: 'duplicate_active_edges'})
  })

  it('every one of the eight provenance permissions is denied on an ancestor version-0 hop', async () => {
    const parent = await f.create('v0-parent', hub.devToken)
    const child = await f.create('v0-child', hub.tokenOf(parent))
    await f.unrecord(parent)
    const walk = createWalkGuard(hub)
    const ctx: CallContext = {principal: {kind: 'agent', id: child, projectId}, credentialKind: 'agent', requestId: 't'}
    const hidden = await f.chainIds([parent])
    // agent.identity_token is in no V1 row: adoption cannot lift its denial, so no remediation keys.
    const carried = new Set(Object.values(POLICY_V1).flat())
    for (const permission of PROVENANCE_REQUIRED) {
      const err = await walk.require(ctx, permission).catch((e: unknown) => e)
      expect(err, permission).toBeInstanceOf(AppError)
      expect((err as AppError).details).toEqual({permission, reason: 'ceiling_unrecorded', ...(carried.has(permission) && UNRECORDED_DENIAL)})
      for (const id of hidden) expect(JSON.stringify((err as AppError).details)).not.toContain(id)
    }
    expectUnrecordedDenial(await f.listSecrets(hub.tokenOf(child)), hidden)
  })

  it('a recorded chain allows the provenance permissions', async () => {
    const parent = await f.create('rec-parent', member.token)
    const child = await f.create('rec-child', hub.tokenOf(parent))
    expect((await f.listSecrets(hub.tokenOf(child))).status).toBe(200)
    expect((await hub.request('PUT', `/api/v1/projects/${projectId}/secrets/FROM_CHILD`, {body: {value: 'v'}, token: hub.tokenOf(child)})).status).toBe(200)
  })

  it("deactivating an ancestor's edge denies the descendant at once; reactivating allows again", async () => {
    const parent = await f.create('edge-parent', member.token)
    const child = await f.create('edge-child', hub.tokenOf(parent))
    const token = hub.tokenOf(child)
    expect((await f.listSecrets(token)).status).toBe(200)
    const [edge] = await hub.store.delegationEdges.activeFor(parent)
    await hub.store.delegationEdges.deactivate(edge.id, 'revoked', iso(new Date()))
    const denied = await f.listSecrets(token)
    expect(denied.status).toBe(403)
    // A plain denial: adoption would not lift it, so no remediation keys.
    expect(denied.body.error.details).toEqual({permission: 'project.secret_read', reason: 'missing_edge'})
    await hub.store.delegationEdges.reactivate(edge.id, iso(new Date()))
    expect((await f.listSecrets(token)).status).toBe(200)
  })

  it("every agent route walks: with its parent's edge gone, the child is refused everywhere", async () => {
    const parent = await f.create('routes-parent', member.token)
    const child = await f.create('routes-child', hub.tokenOf(parent))
    const peer = await f.create('routes-peer', member.token)
    const token = hub.tokenOf(child)
    const [edge] = await hub.store.delegationEdges.activeFor(parent)
    await hub.store.delegationEdges.deactivate(edge.id, 'revoked', iso(new Date()))
    const calls: Array<[string, string, unknown, string]> = [
      ['GET', `/api/v1/agents/${peer}`, undefined, 'forbidden'],
      ['POST', `/api/v1/agents/${peer}/stop`, {}, 'forbidden'],
      ['POST', '/api/v1/agents', {projectId, name: 'routes-grandchild', harnessConfig: 'shell'}, 'forbidden'],
      ['POST', `/api/v1/agents/${peer}/message`, {message: 'hello'}, 'forbidden'],
      // Keys reach only the agent itself and its descendants (another agent is 404): its own terminal.
      ['POST', `/api/v1/agents/${child}/keys`, {keys: 'x'}, 'keys_denied'],
    ]
    for (const [method, url, body, code] of calls) {
      const r = await hub.request(method, url, {body, token})
      expect(r.status, `${method} ${url} ${JSON.stringify(r.body)}`).toBe(403)
      expect(r.body.error).toMatchObject({code, details: {reason: 'missing_edge'}})
    }
    // Its own status reports are self-maintenance and keep working (docs/delegation.md).
    expect((await hub.request('POST', `/api/v1/agents/${child}/status`, {body: {activity: 'idle'}, token})).status).toBe(200)
    await hub.store.delegationEdges.reactivate(edge.id, iso(new Date()))
    expect((await hub.request('GET', `/api/v1/agents/${peer}`, {token})).status).toBe(200)
  })

  it('deleting an ancestor agent denies the descendant at once', async () => {
    const parent = await f.create('del-parent', member.token)
    const child = await f.create('del-child', hub.tokenOf(parent))
    const token = hub.tokenOf(child)
    expect((await hub.request('GET', `/api/v1/agents/${parent}`, {token})).status).toBe(200)
    expect((await hub.request('DELETE', `/api/v1/agents/${parent}`)).status).toBe(200)
    const r = await f.listSecrets(token)
    expect(r.status).toBe(403)
    expect(r.body.error.details.reason).toBe('parent_deleted')
    // Its project is no longer readable to it: the named project is 404, never an empty list.
    expect((await hub.request('GET', `/api/v1/agents?projectId=${projectId}`, {token})).status).toBe(404)
  })

  it('suspending the root user denies descendants at once; restoring the user restores them', async () => {
    const root = await createUser(hub)
    await hub.store.projects.setMember(projectId, root.user.id, 'member', iso(new Date()))
    const parent = await f.create('root-parent', root.token)
    const child = await f.create('root-child', hub.tokenOf(parent))
    const token = hub.tokenOf(child)
    const probe = () => hub.request('GET', `/api/v1/agents/${parent}`, {token})
    expect((await probe()).status).toBe(200)
    expect((await hub.request('PATCH', `/api/v1/users/${root.user.id}`, {body: {status: 'suspended'}})).status).toBe(200)
    for (const r of [await probe(), await f.listSecrets(token), await f.listSecrets(hub.tokenOf(parent))]) {
      expect(r.status).toBe(403)
      expect(r.body.error.details.reason).toBe('root_inactive')
    }
    expect((await hub.request('PATCH', `/api/v1/users/${root.user.id}`, {body: {status: 'active'}})).status).toBe(200)
    expect((await probe()).status).toBe(200)
    expect((await f.listSecrets(token)).status).toBe(200)
  })

  it('an adopted chain keeps the plain denial for what no adopted ceiling carries (artifacts)', async () => {
    const id = await f.create('adopted', hub.devToken)
    const old = await f.unrecord(id)
    // The row an adoption writes: system_migration, the V1 ceiling of its role, bound to its project.
    await hub.store.transaction(async (tx) => {
      await tx.delegationEdges.deactivate(old.id, 'provenance_adopted', iso(new Date()))
      await tx.delegationEdges.insert({...old, id: newId(), provenanceVersion: 1, sourceCredentialKind: 'system_migration', ceiling: JSON.stringify(POLICY_V1.full), ceilingPolicy: 'v1', ceilingProjectId: projectId, createdAt: iso(new Date())})
    })
    const token = hub.tokenOf(id)
    expect((await f.listSecrets(token)).status).toBe(200)
    const r = await hub.request('POST', '/api/v1/artifacts?name=a.txt', {body: Buffer.from('x'), headers: {'content-type': 'application/octet-stream'}, token})
    expect(r.status, JSON.stringify(r.body)).toBe(403)
    expect(r.body.error.details).toEqual({permission: 'artifact.create', reason: 'ceiling_lacks_permission'})
  })

  it('an agent with an unrecorded hop cannot create an assign-mode child; a recorded one can', async () => {
    const legacy = await f.create('sa-legacy', hub.devToken)
    await f.unrecord(legacy)
    const hidden = await f.chainIds([legacy])
    const assign = {cloudIdentityMode: 'Assign', cloudIdentityServiceAccountId: 'builder@example.iam'}
    const r = await hub.request('POST', '/api/v1/agents', {body: {projectId, name: 'sa-child', harnessConfig: 'shell', ...assign}, token: hub.tokenOf(legacy)})
    expectUnrecordedDenial(r, hidden)
    expect(r.body.error.message).toMatch(/ask an authorized user to reincarnate or recreate this agent/)
    expect(r.body.error.details.permission).toBe('cloud_service_account.assign')
    expect(await hub.store.agents.getByName(projectId, 'sa-child')).toBeNull()
    // A child without an assign-mode account is still allowed.
    await f.create('plain-child', hub.tokenOf(legacy))

    // The project default applies too (rule 6): the child would take the default account.
    const set = await hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {body: {defaultCloudIdentityMode: 'Assign', defaultCloudIdentityServiceAccountId: 'builder@example.iam'}})
    expect(set.status, JSON.stringify(set.body)).toBe(200)
    try {
      expectUnrecordedDenial(await hub.request('POST', '/api/v1/agents', {body: {projectId, name: 'sa-default', harnessConfig: 'shell'}, token: hub.tokenOf(legacy)}), hidden)
      const recorded = await f.create('sa-recorded', member.token)
      await f.create('sa-recorded-child', hub.tokenOf(recorded))
    } finally {
      await hub.request('PUT', `/api/v1/projects/${projectId}/settings`, {body: {defaultCloudIdentityMode: null, defaultCloudIdentityServiceAccountId: null}})
    }
  })
})
