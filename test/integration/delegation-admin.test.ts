import {afterAll, beforeAll, expect, it} from 'vitest'
import {edgeFingerprint} from '../../src/domain/delegation/edge-class.js'
import {POLICY_V1} from '../../src/domain/delegation/policy-v1.js'
import {iso} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import {ADOPTION, legacyAgents, newProject, previewFor} from '../helpers/adoption.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Admin adoption commits (SPEC "Delegation adoption admin API"): the preview writes nothing;
 * the commit recomputes the plan in one transaction, refuses a stale fingerprint, an empty plan
 * or more than 500 hops, re-checks the admin, writes records and audit records, and writes
 * every hop or nothing. Each test works in its own project and scopes its plan to it.
 */
describeEachDialect('delegation adoption admin: adopt commits', (dialect) => {
  let hub: TestHub
  let admin: TestUser

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    admin = await createUser(hub, {systemAdmin: true})
  })
  afterAll(() => hub?.dispose())

  const post = (what: 'previews' | 'commits', body: unknown, token = admin.token) => hub.request('POST', `${ADOPTION}/${what}`, {body, token})
  const auditOf = async (kind: string, planId: string) => (await hub.store.audit.list(kind, 5000)).filter((a) => a.details.planId === planId)
  const edgesOf = async (projectId: string) => (await hub.store.delegationEdges.listAll()).filter((e) => e.projectId === projectId)
  const recordsOf = async (projectId: string) => hub.store.delegationAdoptions.list({projectId})

  it('a project is named by ID or slug in the status filter and the plan scope, as elsewhere in the API', async () => {
    const projectId = await newProject(hub, 'by-slug')
    const slug = (await hub.store.projects.get(projectId))!.slug
    expect(slug).not.toBe(projectId)
    const [agent] = await legacyAgents(hub, [{projectId, by: admin.user.id, role: 'full'}])
    const st = await hub.request('GET', `${ADOPTION}?projectId=${slug}`, {token: admin.token})
    expect(st.status).toBe(200)
    expect(st.body.notInCohort.map((h: {agentId: string}) => h.agentId)).toEqual([agent])
    const bySlug = await post('previews', {operation: 'adopt', scope: {projectId: slug}})
    const byId = await post('previews', {operation: 'adopt', scope: {projectId}})
    expect(bySlug.body.hops).toEqual(byId.body.hops)
    expect(bySlug.body.planFingerprint).toBe(byId.body.planFingerprint)
    // A reference that names no project plans nothing (it may be a deleted project's ID).
    expect((await post('previews', {operation: 'adopt', scope: {projectId: 'no-such-project'}})).body.hops).toEqual([])
  })

  it('preview writes nothing; commit adopts top-down with records, initiator and audit records', async () => {
    const projectId = await newProject(hub, 'adopt')
    const [root] = await legacyAgents(hub, [{projectId, by: admin.user.id, role: 'full'}])
    const [child] = await legacyAgents(hub, [{projectId, by: {agent: root}, role: 'baseline'}])
    const before = await edgesOf(projectId)

    const st = await hub.request('GET', `${ADOPTION}?projectId=${projectId}`, {token: admin.token})
    expect(st.status).toBe(200)
    // Written after any snapshot and named by no record: both hops are listed as not in the cohort.
    expect(st.body.notInCohort.map((h: {agentId: string}) => h.agentId).sort()).toEqual([root, child].sort())

    const body = {operation: 'adopt', scope: {projectId}}
    const {preview, commitBody} = await previewFor(hub, body, admin.token)
    expect(preview).toMatchObject({operation: 'adopt', coveredRecordIds: [], counts: {adopt: 2}})
    expect(preview.hops.map((h: {agentId: string}) => h.agentId)).toEqual([root, child])
    expect(preview.hops[0]).toMatchObject({outcome: 'adopt', reason: null, delegator: {kind: 'user', id: admin.user.id}, role: 'full', beforeCeiling: null, afterCeiling: [...POLICY_V1.full]})
    expect(preview.hops[1].afterCeiling).toEqual([...POLICY_V1.baseline])
    expect(await edgesOf(projectId)).toEqual(before)
    expect(await recordsOf(projectId)).toEqual([])

    const c = await post('commits', commitBody)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    expect(c.body).toMatchObject({planId: preview.planId, hops: 2, coveredRecords: 0})
    expect(c.body.recordIds).toHaveLength(2)

    for (const [agentId, role] of [[root, 'full'], [child, 'baseline']] as const) {
      const edges = await hub.store.delegationEdges.forAgent(agentId)
      const original = edges.find((e) => e.provenanceVersion === 0)!
      const adopted = edges.find((e) => e.active)!
      expect(original).toMatchObject({active: false, deactivationCause: 'provenance_adopted'})
      expect(adopted).toMatchObject({sourceCredentialKind: 'system_migration', ceilingPolicy: 'v1', ceilingProjectId: projectId, role, initiator: {kind: 'user', id: admin.user.id}})
      expect(JSON.parse(adopted.ceiling!)).toEqual([...POLICY_V1[role]])
    }
    const records = await recordsOf(projectId)
    expect(records.map((r) => r.id).sort()).toEqual([...c.body.recordIds].sort())
    for (const r of records) expect(r).toMatchObject({status: 'adopted', origin: 'admin_commit', actorKind: 'user', actorId: admin.user.id, reason: null})

    const hopAudits = await auditOf('delegation_provenance_adoption', preview.planId)
    expect(hopAudits).toHaveLength(2)
    for (const a of hopAudits) {
      expect(a.actor).toEqual({kind: 'user', id: admin.user.id})
      expect(a.details.beforeSummary).toMatchObject({provenanceVersion: 0, ceiling: null})
      expect(a.details.afterSummary).toMatchObject({provenanceVersion: 1, sourceCredentialKind: 'system_migration'})
    }
    const [summary] = await auditOf('delegation_provenance_adoption_commit', preview.planId)
    expect(summary.details).toMatchObject({operation: 'adopt', hops: 2})

    // The status view now pages the records; nothing of this project is left outside the cohort.
    const after = await hub.request('GET', `${ADOPTION}?projectId=${projectId}&status=adopted`, {token: admin.token})
    expect(after.body).toMatchObject({total: 2, limit: 100, offset: 0, notInCohort: []})
    expect(after.body.records[0]).toEqual({
      id: expect.any(String), status: 'adopted', reason: null, origin: 'admin_commit', originalEdgeId: expect.any(String), adoptedEdgeId: expect.any(String), beforeFingerprint: expect.any(String),
      projectId, delegateAgentId: expect.any(String), actorKind: 'user', actorId: admin.user.id, afterSummary: expect.any(Object), revertedByKind: null, revertedById: null, revertedAt: null, revertSummary: null, createdAt: expect.any(String),
    })

    // The same fingerprint again: the plan has changed (hops are now recognized).
    const again = await post('commits', commitBody)
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe('stale_authorization_preview')
    // A fresh preview of the adopted chain writes nothing: 422 empty_plan.
    const fresh = await previewFor(hub, body, admin.token)
    expect(fresh.preview.counts).toEqual({recognized: 2})
    const empty = await post('commits', fresh.commitBody)
    expect(empty.status).toBe(422)
    expect(empty.body.error.code).toBe('empty_plan')
  })

  it('a hop the start-up migration left pending is adopted by a commit into that same record', async () => {
    const projectId = await newProject(hub, 'pending')
    const [agentId] = await legacyAgents(hub, [{projectId, by: admin.user.id}])
    const [edge] = await hub.store.delegationEdges.activeFor(agentId)
    // A cohort record whose write failed at start-up: still pending, so not "not in cohort".
    const pendingId = newId()
    const now = iso(new Date())
    await hub.store.delegationAdoptions.insertMany([{
      id: pendingId, status: 'pending', reason: null, origin: 'startup_migration', originalEdgeId: edge.id, adoptedEdgeId: null, beforeFingerprint: edgeFingerprint(edge), projectId,
      delegateAgentId: agentId, depth: 0, actorKind: null, actorId: null, afterSummary: null, revertedByKind: null, revertedById: null, revertedAt: null, revertSummary: null, createdAt: now,
    }])
    const st = await hub.request('GET', `${ADOPTION}?projectId=${projectId}`, {token: admin.token})
    expect(st.body).toMatchObject({total: 1, notInCohort: []})
    const {preview, commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    expect(preview.hops).toEqual([expect.objectContaining({agentId, outcome: 'adopt', recordId: pendingId})])
    const c = await post('commits', commitBody)
    expect(c.body.recordIds).toEqual([pendingId])
    const [record] = await recordsOf(projectId)
    expect(record).toMatchObject({id: pendingId, status: 'adopted', origin: 'admin_commit', actorKind: 'user', actorId: admin.user.id, originalEdgeId: edge.id})
    expect(record.adoptedEdgeId).toBe((await hub.store.delegationEdges.activeFor(agentId))[0].id)
  })

  it('two commits of one plan at once: one writes, the other is refused as stale, nothing is adopted twice', async () => {
    const projectId = await newProject(hub, 'race')
    await legacyAgents(hub, [{projectId, by: admin.user.id}, {projectId, by: admin.user.id}])
    const {commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    const results = await Promise.all([post('commits', commitBody), post('commits', commitBody)])
    expect(results.map((r) => r.status).sort()).toEqual([200, 409])
    // Each agent has exactly one active edge and one record: nothing was adopted twice.
    expect((await edgesOf(projectId)).filter((e) => e.active)).toHaveLength(2)
    expect(await recordsOf(projectId)).toHaveLength(2)
  })

  it('status: limit defaults to 100, at most 500 (501 is a validation error), offset pages', async () => {
    const big = await hub.request('GET', `${ADOPTION}?limit=501`, {token: admin.token})
    expect(big.status).toBe(400)
    expect(big.body.error.code).toBe('validation_error')
    const projectId = await newProject(hub, 'paging')
    await legacyAgents(hub, Array.from({length: 3}, () => ({projectId, by: admin.user.id})))
    const {commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    expect((await post('commits', commitBody)).status).toBe(200)
    const all = await hub.request('GET', `${ADOPTION}?projectId=${projectId}`, {token: admin.token})
    const page = await hub.request('GET', `${ADOPTION}?projectId=${projectId}&limit=2&offset=2`, {token: admin.token})
    expect(page.body).toMatchObject({total: 3, limit: 2, offset: 2})
    expect(page.body.records.map((r: {id: string}) => r.id)).toEqual([all.body.records[2].id])
    expect(all.body.counts.byStatus.adopted).toBeGreaterThanOrEqual(3)
  })

  it('status: a status or reason filter naming no status or reason is a validation error naming the values, not an empty page', async () => {
    for (const [field, value, known] of [['status', 'adopt', 'adopted'], ['reason', 'edge-changed', 'edge_changed']]) {
      const r = await hub.request('GET', `${ADOPTION}?${field}=${value}`, {token: admin.token})
      expect(r.status, field).toBe(400)
      expect(r.body.error.code).toBe('validation_error')
      expect(r.body.error.details.fields).toEqual([{path: `querystring.${field}`, message: expect.stringContaining(known)}])
      expect((await hub.request('GET', `${ADOPTION}?${field}=${known}`, {token: admin.token})).status, known).toBe(200)
    }
  })

  it('a changed edge between preview and commit is 409 stale_authorization_preview; nothing is written', async () => {
    const projectId = await newProject(hub, 'stale')
    const [a, b] = await legacyAgents(hub, [{projectId, by: admin.user.id}, {projectId, by: admin.user.id}])
    const {commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    // Another writer replaces b's edge with a narrower role after the preview.
    const [old] = await hub.store.delegationEdges.activeFor(b)
    await hub.store.transaction(async (tx) => {
      await tx.delegationEdges.deactivate(old.id, null, iso(new Date()))
      await tx.delegationEdges.insert({...old, id: newId(), role: 'readonly', createdAt: iso(new Date())})
    })
    const before = await edgesOf(projectId)
    const r = await post('commits', commitBody)
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('stale_authorization_preview')
    expect(r.body.error.details.planFingerprint).not.toBe(commitBody.planFingerprint)
    expect(await edgesOf(projectId)).toEqual(before)
    expect(await recordsOf(projectId)).toEqual([])
    expect((await hub.store.delegationEdges.activeFor(a))[0].provenanceVersion).toBe(0)
  })

  it('an admin revoked or suspended between preview and commit: 403 mutation_permission_lost, nothing written', async () => {
    const projectId = await newProject(hub, 'revoked')
    await legacyAgents(hub, [{projectId, by: admin.user.id}])
    const other = await createUser(hub, {systemAdmin: true})
    const {commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, other.token)
    const before = await edgesOf(projectId)
    const original = hub.store.transaction
    for (const patch of [{systemAdmin: false}, {status: 'suspended' as const}]) {
      // The request is authenticated while the caller is still an admin; the revocation lands
      // just before the commit's transaction starts, as a concurrent admin would make it.
      hub.store.transaction = (async (fn: Parameters<typeof original>[0]) => {
        await hub.store.users.update(other.user.id, patch, iso(new Date()))
        return original(fn)
      }) as typeof original
      try {
        const r = await post('commits', commitBody, other.token)
        expect(r.status, JSON.stringify(r.body)).toBe(403)
        expect(r.body.error.code).toBe('mutation_permission_lost')
      } finally {
        hub.store.transaction = original
        await hub.store.users.update(other.user.id, {systemAdmin: true, status: 'active'}, iso(new Date()))
      }
    }
    expect(await edgesOf(projectId)).toEqual(before)
    expect(await recordsOf(projectId)).toEqual([])
  })

  it('501 adoptable hops: 422 plan_too_large and nothing written; 500 of them commit', async () => {
    const projectId = await newProject(hub, 'large')
    const ids = await legacyAgents(hub, Array.from({length: 501}, () => ({projectId, by: admin.user.id, role: 'readonly'})))
    const {preview, commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    expect(preview.counts).toEqual({adopt: 501})
    const r = await post('commits', commitBody)
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('plan_too_large')
    expect(r.body.error.details.hops).toBe(501)
    expect(await recordsOf(projectId)).toEqual([])
    expect((await edgesOf(projectId)).every((e) => e.provenanceVersion === 0 && e.active)).toBe(true)

    const five = await previewFor(hub, {operation: 'adopt', scope: {projectId, agentIds: ids.slice(1)}}, admin.token)
    const ok = await post('commits', five.commitBody)
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body.hops).toBe(500)
  })

  it('all or nothing: a write failing mid-commit leaves no edge, record or audit record written', async () => {
    const projectId = await newProject(hub, 'atomic')
    await legacyAgents(hub, [{projectId, by: admin.user.id}, {projectId, by: admin.user.id}, {projectId, by: admin.user.id}])
    const {preview, commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    const before = await edgesOf(projectId)
    const original = hub.store.transaction
    // The second adopted-edge insert fails after the first hop was fully written.
    hub.store.transaction = (async (fn: Parameters<typeof original>[0]) =>
      original((tx) => {
        let inserts = 0
        const insert: typeof tx.delegationEdges.insert = async (e) => {
          if (++inserts === 2) throw new Error('disk full')
          return tx.delegationEdges.insert(e)
        }
        return fn({...tx, delegationEdges: {...tx.delegationEdges, insert}})
      })) as typeof original
    try {
      const r = await post('commits', commitBody)
      expect(r.status).toBe(500)
    } finally {
      hub.store.transaction = original
    }
    expect(await edgesOf(projectId)).toEqual(before)
    expect(await recordsOf(projectId)).toEqual([])
    expect(await auditOf('delegation_provenance_adoption', preview.planId)).toEqual([])
    expect(await auditOf('delegation_provenance_adoption_commit', preview.planId)).toEqual([])
  })
})
