import {afterAll, beforeAll, expect, it} from 'vitest'
import {classifyEdge} from '../../src/domain/delegation/edge-class.js'
import {ROLE_SCOPES} from '../../src/domain/delegation/role-scopes.js'
import {iso} from '../../src/domain/shared/clock.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'
import {walkFixture} from '../helpers/walk-fixture.js'

/**
 * Reincarnation (POST /api/v1/agents/:id/reincarnate): a user's reincarnation re-records an
 * unrecorded own edge, or the edge under an unrecorded ancestor, with the user as delegator and
 * clears the denial; the agent's own reincarnation keeps the edge and the denial; a role change
 * records a new edge; a running agent restarts with a fresh token.
 */
describeEachDialect('delegation: reincarnation', (dialect) => {
  let hub: FakeBrokerHub
  let projectId: string
  let member: TestUser
  let f: ReturnType<typeof walkFixture>

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'reincarnate'}})).body.project.id
    member = await createUser(hub)
    await hub.store.projects.setMember(projectId, member.user.id, 'member', iso(new Date()))
    f = walkFixture(hub, projectId)
  })
  afterAll(() => hub?.dispose())

  const reincarnate = (id: string, token: string, body: object = {}) => hub.request('POST', `/api/v1/agents/${id}/reincarnate`, {body, token})

  it("a user's reincarnation re-records an unrecorded own edge and clears the denial", async () => {
    const id = await f.create('own-v0', hub.devToken)
    const old = await f.unrecord(id)
    const before = hub.tokenOf(id)
    expect((await f.listSecrets(before)).status).toBe(403)
    const r = await reincarnate(id, member.token)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.agent).toMatchObject({id, phase: 'running'})
    const [edge] = await hub.store.delegationEdges.activeFor(id)
    expect(edge).toMatchObject({delegator: {kind: 'user', id: member.user.id}, role: 'full', provenanceVersion: 1, sourceCredentialKind: 'session'})
    expect(classifyEdge(edge)).toEqual({kind: 'recorded', ceiling: [...ROLE_SCOPES.full].sort()})
    expect(await hub.store.delegationEdges.get(old.id)).toMatchObject({active: false, deactivationCause: 'reincarnated'})
    expect((await hub.store.agents.get(id))!.createdBy).toEqual({kind: 'user', id: member.user.id})
    // Restarted with a fresh token: the old one is revoked, the new one passes the walk.
    const after = hub.tokenOf(id)
    expect(after).not.toBe(before)
    expect((await f.listSecrets(before)).status).toBe(401)
    expect((await f.listSecrets(after)).status).toBe(200)
  })

  it("a user's reincarnation re-records the edge under an unrecorded ancestor when every edge between is accepted", async () => {
    const parent = await f.create('anc-v0', hub.devToken)
    const child = await f.create('anc-child', hub.tokenOf(parent))
    await f.unrecord(parent)
    const [childEdge] = await hub.store.delegationEdges.activeFor(child)
    expect(classifyEdge(childEdge).kind).toBe('recorded')
    expect((await f.listSecrets(hub.tokenOf(child))).body.error.details.deny_cause).toBe('ceiling_unrecorded')
    expect((await reincarnate(child, hub.devToken)).status).toBe(200)
    const [edge] = await hub.store.delegationEdges.activeFor(child)
    expect(edge.id).not.toBe(childEdge.id)
    expect(edge.delegator).toEqual({kind: 'user', id: 'dev-user'})
    expect((await f.listSecrets(hub.tokenOf(child))).status).toBe(200)
  })

  it('a reincarnation by the agent itself, or by another agent, keeps the edge and the denial', async () => {
    const id = await f.create('self-v0', hub.devToken)
    const peer = await f.create('peer', hub.devToken)
    const edge = await f.unrecord(id)
    for (const caller of [id, peer]) {
      const before = hub.tokenOf(id)
      const r = await reincarnate(id, hub.tokenOf(caller))
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(hub.tokenOf(id)).not.toBe(before)
      expect((await hub.store.delegationEdges.activeFor(id)).map((e) => e.id)).toEqual([edge.id])
      const denied = await f.listSecrets(hub.tokenOf(id))
      expect(denied.status).toBe(403)
      expect(denied.body.error.details.deny_cause).toBe('ceiling_unrecorded')
    }
  })

  it("an agent's reincarnation keeps the edge even when it asks for a role change: refused, the denial stays", async () => {
    // SPEC "Denial details": a reincarnation by the agent itself or by another agent keeps the edge
    // and does not clear the denial. A role change would re-record the edge under the calling
    // agent (baseline, then full again) and so clear it; it is refused instead.
    const target = await f.create('agent-role-v0', hub.devToken)
    const caller = await f.create('agent-role-caller', member.token)
    const edge = await f.unrecord(target)
    for (const role of ['baseline', 'readonly']) {
      const r = await reincarnate(target, hub.tokenOf(caller), {role})
      expect(r.status, JSON.stringify(r.body)).toBe(403)
      expect(r.body.error.code).toBe('forbidden')
    }
    expect((await hub.store.delegationEdges.activeFor(target)).map((e) => e.id)).toEqual([edge.id])
    expect((await hub.store.agents.get(target))!.role).toBe('full')
    const denied = await f.listSecrets(hub.tokenOf(target))
    expect(denied.status).toBe(403)
    expect(denied.body.error.details.deny_cause).toBe('ceiling_unrecorded')
    // Keeping the role is a plain restart for an agent caller.
    expect((await reincarnate(target, hub.tokenOf(caller), {role: 'full'})).status).toBe(200)
    expect((await hub.store.delegationEdges.activeFor(target)).map((e) => e.id)).toEqual([edge.id])
  })

  it('a user keeping the role of a fully recorded agent keeps its edge', async () => {
    const id = await f.create('recorded', member.token)
    const [edge] = await hub.store.delegationEdges.activeFor(id)
    expect((await reincarnate(id, hub.devToken)).status).toBe(200)
    expect((await hub.store.delegationEdges.activeFor(id)).map((e) => e.id)).toEqual([edge.id])
  })

  it('a role change records a new edge with the new role and restarts with its scopes', async () => {
    const id = await f.create('demoted', member.token)
    const r = await reincarnate(id, member.token, {role: 'readonly'})
    expect(r.status).toBe(200)
    expect((await hub.store.agents.get(id))!.role).toBe('readonly')
    const [edge] = await hub.store.delegationEdges.activeFor(id)
    expect(edge).toMatchObject({role: 'readonly', delegator: {kind: 'user', id: member.user.id}})
    expect(classifyEdge(edge)).toEqual({kind: 'recorded', ceiling: [...ROLE_SCOPES.readonly].sort()})
    // The fresh token carries the readonly scopes: no lifecycle actions any more.
    expect((await hub.request('POST', `/api/v1/agents/${id}/stop`, {body: {}, token: hub.tokenOf(id)})).status).toBe(403)
    expect((await reincarnate(id, member.token, {role: 'root'})).status).toBe(400)
  })

  it('an agent may not change its own role or the role of its delegator', async () => {
    const parent = await f.create('cyc-parent', member.token)
    const child = await f.create('cyc-child', hub.tokenOf(parent))
    for (const target of [child, parent]) {
      const r = await reincarnate(target, hub.tokenOf(child), {role: 'baseline'})
      expect(r.status, target).toBe(403)
    }
    expect((await hub.store.agents.get(parent))!.role).toBe('full')
  })

  it('needs agent.lifecycle on the agent, and works on the project-scoped form', async () => {
    const id = await f.create('guarded', member.token)
    const outsider = await createUser(hub)
    expect((await reincarnate(id, outsider.token)).status).toBe(404)
    const r = await hub.request('POST', `/api/v1/projects/${projectId}/agents/guarded/reincarnate`, {body: {}, token: member.token})
    expect(r.status).toBe(200)
    expect(r.body.agent.id).toBe(id)
  })
})
