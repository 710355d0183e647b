import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import {backfillDelegationEdges} from '../../src/domain/delegation/backfill.js'
import {classifyEdge} from '../../src/domain/delegation/edge-class.js'
import {ROLE_SCOPES} from '../../src/domain/delegation/role-scopes.js'
import {BACKFILL_MARKER_KEY} from '../../src/domain/delegation/types.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Every agent creation records exactly one active delegation edge, in the same transaction:
 * delegator, role, provenance version 1, the request's credential kind, and a ceiling bounded
 * by the delegator's own. The backfill gives agents that predate edges a version-0 edge, once.
 */
describeEachDialect('delegation edges at creation and the backfill', (dialect) => {
  let hub: FakeBrokerHub
  let projectId: string
  let member: TestUser

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'edges'}})).body.project.id
    member = await createUser(hub)
    await hub.store.projects.setMember(projectId, member.user.id, 'member', iso(new Date()))
  })
  afterAll(() => hub?.dispose())

  const create = async (body: Record<string, unknown>, token: string) => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {projectId, harnessConfig: 'shell', ...body}, token})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.agent.id as string
  }

  it("a user's agent gets one active recorded edge with the role's whole scope", async () => {
    const id = await create({name: 'by-user', role: 'baseline'}, member.token)
    const edges = await hub.store.delegationEdges.forAgent(id)
    expect(edges).toHaveLength(1)
    const [e] = edges
    expect(e).toMatchObject({active: true, delegator: {kind: 'user', id: member.user.id}, projectId, role: 'baseline', provenanceVersion: 1, sourceCredentialKind: 'session'})
    expect(classifyEdge(e)).toEqual({kind: 'recorded', ceiling: [...ROLE_SCOPES.baseline].sort()})
  })

  it('the dev credential is recorded as its kind', async () => {
    const id = await create({name: 'by-dev', role: 'readonly'}, hub.devToken)
    const [e] = await hub.store.delegationEdges.forAgent(id)
    expect(e.sourceCredentialKind).toBe('dev')
    expect(classifyEdge(e)).toEqual({kind: 'recorded', ceiling: [...ROLE_SCOPES.readonly].sort()})
  })

  it("a user access token bounds the ceiling by the token's permissions", async () => {
    const t = await hub.request('POST', '/api/v1/auth/tokens', {token: member.token, body: {name: 'ci', projectId, permissions: ['agent.create', 'agent.read', 'project.read']}})
    expect(t.status).toBe(201)
    const id = await create({name: 'by-token', role: 'full'}, t.body.token)
    const [e] = await hub.store.delegationEdges.forAgent(id)
    expect(e.sourceCredentialKind).toBe('user_access_token')
    expect(classifyEdge(e)).toEqual({kind: 'recorded', ceiling: ['agent.create', 'agent.read', 'project.read']})
  })

  it("an agent's child is delegated by the agent and bounded by the agent's ceiling", async () => {
    const parent = await create({name: 'parent', role: 'full'}, member.token)
    // Narrow the parent's recorded ceiling, as an older delegation would have.
    const [pe] = await hub.store.delegationEdges.forAgent(parent)
    await hub.store.transaction(async (tx) => {
      await tx.delegationEdges.deactivate(pe.id, null, iso(new Date()))
      await tx.delegationEdges.insert({...pe, id: newId(), ceiling: JSON.stringify(['agent.create', 'agent.read', 'project.read', 'template.read']), createdAt: iso(new Date())})
    })
    const child = await create({name: 'child', role: 'baseline'}, hub.tokenOf(parent))
    const edges = await hub.store.delegationEdges.forAgent(child)
    expect(edges).toHaveLength(1)
    expect(edges[0]).toMatchObject({delegator: {kind: 'agent', id: parent}, sourceCredentialKind: 'agent', role: 'baseline'})
    // baseline's scope minus what the parent lacks.
    expect(classifyEdge(edges[0])).toEqual({kind: 'recorded', ceiling: ['agent.read', 'project.read', 'template.read']})
  })

  it('the backfill gives every agent without an edge one version-0 edge, naming its creator or the sentinel, once', async () => {
    const now = iso(new Date())
    const legacy = await hub.store.agents.insert({
      id: newId(), projectId, name: 'legacy', brokerId: null, phase: 'stopped', activity: null, detail: '', harnessConfig: 'shell', template: null, task: null, role: 'full',
      runtime: null, runtimeRef: null, config: {}, error: null, createdBy: {kind: 'user', id: member.user.id}, createdAt: now, updatedAt: now,
    })
    const orphan = await hub.store.agents.insert({
      id: newId(), projectId, name: 'orphan', brokerId: null, phase: 'stopped', activity: null, detail: '', harnessConfig: 'shell', template: null, task: null, role: 'readonly',
      runtime: null, runtimeRef: null, config: {}, error: null, createdBy: {kind: 'user', id: ''}, createdAt: now, updatedAt: now,
    })
    // The Hub's own start already ran the backfill over an empty database: it must not run again.
    expect(await backfillDelegationEdges(hub.store, now, hub.logger)).toBeNull()
    expect(await hub.store.delegationEdges.forAgent(legacy.id)).toHaveLength(0)

    expect(await hub.store.hubSettings.get(BACKFILL_MARKER_KEY)).not.toBeNull()
    // A database from a release before edges has no marker: simulate it by removing ours.
    await hub.store.hubSettings.delete(BACKFILL_MARKER_KEY)
    const before = (await hub.store.delegationEdges.listAll()).length
    expect(await backfillDelegationEdges(hub.store, now, hub.logger)).toBe(2)
    const [le] = await hub.store.delegationEdges.forAgent(legacy.id)
    expect(le).toMatchObject({provenanceVersion: 0, active: true, delegator: {kind: 'user', id: member.user.id}, role: 'full', ceiling: null, sourceCredentialKind: null})
    expect(classifyEdge(le).kind).toBe('unrecorded')
    const [oe] = await hub.store.delegationEdges.forAgent(orphan.id)
    expect(oe.delegator).toEqual({kind: 'user', id: 'system/migration'})
    expect((await hub.store.delegationEdges.listAll()).length).toBe(before + 2)
    expect(await backfillDelegationEdges(hub.store, now, hub.logger)).toBeNull()
  })

})
