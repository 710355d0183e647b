import {afterAll, beforeAll, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import {adoptHop} from '../../src/domain/delegation/adopt-hop.js'
import {edgeFingerprint} from '../../src/domain/delegation/edge-class.js'
import {POLICY_V1} from '../../src/domain/delegation/policy-v1.js'
import type {AdoptionRecord} from '../../src/store/repositories/delegation-adoptions.js'
import {ADOPTION, legacyAgents, newProject, previewFor} from '../helpers/adoption.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'
import {buildLegacyFixture} from '../helpers/legacy-fixture.js'
import {hubDbPerTest} from '../helpers/restart-hub.js'

/**
 * Admin reverts (SPEC "Adoption record and hop": adopted -> reverted): the adopted edge is
 * deactivated with cause `adoption_reverted` and the original unrecorded row comes back; an edge
 * is reverted once and every record naming it is reverted with it (`coveredRecordIds`); a
 * covered record naming another original refuses the hop unless confirmed; adopting again
 * needs a new preview and commit.
 */
describeEachDialect('delegation adoption admin: reverts', (dialect) => {
  let hub: TestHub
  let admin: TestUser

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    admin = await createUser(hub, {systemAdmin: true})
  })
  afterAll(() => hub?.dispose())

  const post = (what: 'previews' | 'commits', body: unknown) => hub.request('POST', `${ADOPTION}/${what}`, {body, token: admin.token})

  /** One legacy agent adopted through an admin commit; returns its record and edges. */
  async function adoptedAgent(name: string) {
    const projectId = await newProject(hub, name)
    const [agentId] = await legacyAgents(hub, [{projectId, by: admin.user.id}])
    const {commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    const c = await post('commits', commitBody)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    const record = (await hub.store.delegationAdoptions.get(c.body.recordIds[0]))!
    return {projectId, agentId, record}
  }

  /** A second record naming the same adopted edge, as a start-up cohort record would. */
  async function coveringRecord(r: AdoptionRecord, originalEdgeId = r.originalEdgeId): Promise<string> {
    const id = newId()
    await hub.store.delegationAdoptions.insertMany([{...r, id, origin: 'startup_migration', originalEdgeId, actorKind: 'system', actorId: 'startup_migration', createdAt: iso(new Date())}])
    return id
  }

  it('a revert restores the original row, reverts the covered records with it, and writes audit records', async () => {
    const {agentId, record} = await adoptedAgent('revert')
    const covered = await coveringRecord(record)
    const body = {operation: 'revert', recordIds: [record.id]}
    const {preview, commitBody} = await previewFor(hub, body, admin.token)
    expect(preview).toMatchObject({operation: 'revert', coveredRecordIds: [covered], counts: {revert: 1}})
    expect(preview.hops).toEqual([
      expect.objectContaining({edgeId: record.adoptedEdgeId, originalEdgeId: record.originalEdgeId, agentId, outcome: 'revert', reason: null, recordId: record.id, afterCeiling: null, coveredRecordIds: [covered]}),
    ])
    expect(preview.hops[0].beforeCeiling.length).toBeGreaterThan(0)
    // The preview wrote nothing.
    expect((await hub.store.delegationEdges.get(record.adoptedEdgeId!))!.active).toBe(true)

    const c = await post('commits', commitBody)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    expect(c.body).toMatchObject({planId: preview.planId, hops: 1, coveredRecords: 1})
    expect([...c.body.recordIds].sort()).toEqual([record.id, covered].sort())

    expect(await hub.store.delegationEdges.get(record.adoptedEdgeId!)).toMatchObject({active: false, deactivationCause: 'adoption_reverted'})
    const original = (await hub.store.delegationEdges.get(record.originalEdgeId!))!
    expect(original).toMatchObject({active: true, deactivationCause: null, provenanceVersion: 0})
    expect((await hub.store.delegationEdges.activeFor(agentId)).map((e) => e.id)).toEqual([original.id])
    for (const id of [record.id, covered]) {
      const r = (await hub.store.delegationAdoptions.get(id))!
      expect(r).toMatchObject({status: 'reverted', revertedByKind: 'user', revertedById: admin.user.id, revertedAt: expect.any(String)})
      expect(r.revertSummary).toMatchObject({edgeId: original.id, provenanceVersion: 0, active: true})
    }
    // Actor and after summary of the adoption are kept.
    expect(await hub.store.delegationAdoptions.get(record.id)).toMatchObject({actorKind: 'user', actorId: admin.user.id, afterSummary: record.afterSummary})
    expect(await hub.store.delegationAdoptions.get(covered)).toMatchObject({actorKind: 'system', actorId: 'startup_migration'})

    const audits = (await hub.store.audit.list('delegation_provenance_adoption_revert', 5000)).filter((a) => a.details.planId === preview.planId)
    expect(audits).toHaveLength(1)
    expect(audits[0].details).toMatchObject({beforeSummary: {edgeId: record.adoptedEdgeId, provenanceVersion: 1}, afterSummary: {edgeId: original.id, provenanceVersion: 0}})
    const [summary] = (await hub.store.audit.list('delegation_provenance_adoption_commit', 5000)).filter((a) => a.details.planId === preview.planId)
    expect(summary.details).toMatchObject({operation: 'revert', hops: 1, covered_records: 1})

    // An edge is reverted once: the same records again are refused, and a commit is 422.
    const again = await previewFor(hub, body, admin.token)
    expect(again.preview.hops[0]).toMatchObject({outcome: 'refused', reason: 'not_adopted'})
    const r = await post('commits', again.commitBody)
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('unrevertable_record')
    expect(r.body.error.details.records).toEqual([{recordId: record.id, reason: 'not_adopted'}])
  })

  it('adopting again after a revert takes a new preview and commit, and writes a new record', async () => {
    const {projectId, agentId, record} = await adoptedAgent('readopt')
    const rev = await previewFor(hub, {operation: 'revert', recordIds: [record.id]}, admin.token)
    expect((await post('commits', rev.commitBody)).status).toBe(200)

    // The reactivated original is unrecorded again: the planner shows it as adoptable.
    const {preview, commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    expect(preview.hops).toEqual([expect.objectContaining({agentId, edgeId: record.originalEdgeId, outcome: 'adopt'})])
    const c = await post('commits', commitBody)
    expect(c.status).toBe(200)
    expect(c.body.recordIds).not.toContain(record.id)
    const fresh = (await hub.store.delegationAdoptions.get(c.body.recordIds[0]))!
    expect(fresh).toMatchObject({status: 'adopted', origin: 'admin_commit', originalEdgeId: record.originalEdgeId})
    expect(fresh.adoptedEdgeId).not.toBe(record.adoptedEdgeId)
    expect((await hub.store.delegationAdoptions.get(record.id))!.status).toBe('reverted')
    expect((await hub.store.delegationEdges.activeFor(agentId)).map((e) => e.id)).toEqual([fresh.adoptedEdgeId])
  })

  it('after a revert, the adopt plan committed before it is stale, also when the commit took over a start-up record', async () => {
    const projectId = await newProject(hub, 'readopt-stale')
    const [agentId] = await legacyAgents(hub, [{projectId, by: admin.user.id}])
    const [edge] = await hub.store.delegationEdges.activeFor(agentId)
    // A start-up cohort record still pending for the edge: the admin commit takes it over.
    const startupId = newId()
    await hub.store.delegationAdoptions.insertMany([{
      id: startupId, status: 'pending', reason: null, origin: 'startup_migration', originalEdgeId: edge.id, adoptedEdgeId: null,
      beforeFingerprint: null, projectId, delegateAgentId: agentId, depth: 0, actorKind: null, actorId: null, afterSummary: null,
      revertedByKind: null, revertedById: null, revertedAt: null, revertSummary: null, createdAt: iso(new Date()),
    }])
    const adopt = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    expect(adopt.preview.hops).toEqual([expect.objectContaining({agentId, outcome: 'adopt', recordId: startupId})])
    const c = await post('commits', adopt.commitBody)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    expect(c.body.recordIds).toEqual([startupId])
    const rev = await previewFor(hub, {operation: 'revert', recordIds: [startupId]}, admin.token)
    expect((await post('commits', rev.commitBody)).status).toBe(200)

    // SPEC "Commit effects" 5: adopting again needs a new preview; the old plan is stale.
    const old = await post('commits', adopt.commitBody)
    expect(old.status, JSON.stringify(old.body)).toBe(409)
    expect(old.body.error.code).toBe('stale_authorization_preview')
    expect((await hub.store.delegationEdges.activeFor(agentId)).map((e) => e.id)).toEqual([edge.id])
    const again = await previewFor(hub, {operation: 'adopt', scope: {projectId}}, admin.token)
    expect(again.preview.planFingerprint).not.toBe(adopt.preview.planFingerprint)
    expect((await post('commits', again.commitBody)).status).toBe(200)
  })

  it('a covered record naming another original refuses the hop (covered_original_differs) unless confirmed', async () => {
    const {agentId, record} = await adoptedAgent('differs')
    // An older clean unrecorded row of the same agent, named by a second record.
    const now = iso(new Date())
    const [orig] = await hub.store.delegationEdges.forAgent(agentId)
    const older = await hub.store.delegationEdges.insert({...orig, id: newId(), provenanceVersion: 0, sourceCredentialKind: null, ceiling: null, ceilingPolicy: null, ceilingProjectId: null, initiator: null, active: false, createdAt: now})
    const covered = await coveringRecord(record, older.id)

    const body = {operation: 'revert', recordIds: [record.id]}
    const refused = await previewFor(hub, body, admin.token)
    expect(refused.preview.hops[0]).toMatchObject({outcome: 'refused', reason: 'covered_original_differs'})
    expect(refused.preview.coveredRecordIds).toEqual([])
    const r = await post('commits', refused.commitBody)
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('unrevertable_record')
    expect(r.body.error.details.records).toEqual([{recordId: record.id, reason: 'covered_original_differs'}])
    expect((await hub.store.delegationEdges.get(record.adoptedEdgeId!))!.active).toBe(true)

    // A confirmation naming an edge no record names settles nothing.
    const wrong = await previewFor(hub, {...body, confirmOriginalEdgeIds: {[record.id]: newId()}}, admin.token)
    expect(wrong.preview.hops[0].reason).toBe('covered_original_differs')

    const confirmed = await previewFor(hub, {...body, confirmOriginalEdgeIds: {[covered]: older.id}}, admin.token)
    expect(confirmed.preview.hops[0]).toMatchObject({outcome: 'revert', originalEdgeId: older.id, coveredRecordIds: [covered]})
    const c = await post('commits', confirmed.commitBody)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    expect((await hub.store.delegationEdges.activeFor(agentId)).map((e) => e.id)).toEqual([older.id])
    expect((await hub.store.delegationEdges.get(record.originalEdgeId!))!.active).toBe(false)
  })

  it('unknown records are 422 unrevertable_record; a revert whose adopted edge moved on is refused', async () => {
    const unknown = await post('previews', {operation: 'revert', recordIds: ['no-such-record']})
    expect(unknown.status).toBe(422)
    expect(unknown.body.error).toMatchObject({code: 'unrevertable_record', details: {recordIds: ['no-such-record'], reason: 'record_not_found'}})
    const bad = await post('previews', {operation: 'revert', recordIds: []})
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('validation_error')

    const {record} = await adoptedAgent('moved')
    await hub.store.delegationEdges.deactivate(record.adoptedEdgeId!, null, iso(new Date()))
    const p = await previewFor(hub, {operation: 'revert', recordIds: [record.id]}, admin.token)
    expect(p.preview.hops[0]).toMatchObject({outcome: 'refused', reason: 'adopted_edge_inactive'})
    const r = await post('commits', p.commitBody)
    expect(r.status).toBe(422)
    expect(r.body.error.code).toBe('unrevertable_record')
  })

  it('a revert whose state changed after the preview is 409 stale_authorization_preview', async () => {
    const {record} = await adoptedAgent('revert-stale')
    const covered = await coveringRecord(record)
    const {commitBody} = await previewFor(hub, {operation: 'revert', recordIds: [record.id]}, admin.token)
    // The covered record is reverted on its own in between, which reverts the edge for both.
    const solo = await previewFor(hub, {operation: 'revert', recordIds: [covered]}, admin.token)
    expect((await post('commits', solo.commitBody)).status).toBe(200)
    const r = await post('commits', commitBody)
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('stale_authorization_preview')
  })

  /**
   * An agent an earlier build adopted: its v0 edge deactivated with cause provenance_adopted, an
   * adopted v1 edge active, and the cohort record of that examined edge with status recognized.
   */
  async function recognizedAgent(name: string, extraOriginals = 0) {
    const projectId = await newProject(hub, name)
    const [agentId] = await legacyAgents(hub, [{projectId, by: admin.user.id}])
    const [v0] = await hub.store.delegationEdges.activeFor(agentId)
    const now = iso(new Date())
    const extras: string[] = []
    for (let i = 0; i < extraOriginals; i++) {
      const id = newId()
      await hub.store.delegationEdges.insert({...v0, id, active: false, createdAt: now})
      await hub.store.delegationEdges.reactivate(id, now)
      await hub.store.delegationEdges.deactivate(id, 'provenance_adopted', now)
      extras.push(id)
    }
    const r = await hub.store.transaction((tx) => adoptHop(tx, {edgeId: v0.id, agentId, projectId, afterCeiling: [...POLICY_V1.full], beforeFingerprint: edgeFingerprint(v0)}, now, null))
    if (!r.ok) throw new Error('adoptHop refused')
    const recordId = newId()
    await hub.store.delegationAdoptions.insertMany([{
      id: recordId, status: 'recognized', reason: null, origin: 'startup_migration', originalEdgeId: r.adopted.id, adoptedEdgeId: null,
      beforeFingerprint: edgeFingerprint(r.adopted), projectId, delegateAgentId: agentId, depth: 0, actorKind: null, actorId: null, afterSummary: null,
      revertedByKind: null, revertedById: null, revertedAt: null, revertSummary: null, createdAt: now,
    }])
    return {agentId, recordId, adoptedId: r.adopted.id, originalId: v0.id, extras}
  }

  it('a recognized record (adopted by an earlier build) reverts to the one unrecorded row that adoption deactivated', async () => {
    const {agentId, recordId, adoptedId, originalId} = await recognizedAgent('recognized')
    const body = {operation: 'revert', recordIds: [recordId]}
    const {preview, commitBody} = await previewFor(hub, body, admin.token)
    expect(preview.hops).toEqual([expect.objectContaining({edgeId: adoptedId, originalEdgeId: originalId, outcome: 'revert', reason: null, recordId, beforeCeiling: [...POLICY_V1.full]})])
    const c = await post('commits', commitBody)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    expect(c.body).toMatchObject({hops: 1, recordIds: [recordId]})
    expect(await hub.store.delegationEdges.get(adoptedId)).toMatchObject({active: false, deactivationCause: 'adoption_reverted'})
    expect((await hub.store.delegationEdges.activeFor(agentId)).map((e) => e.id)).toEqual([originalId])
    expect(await hub.store.delegationAdoptions.get(recordId)).toMatchObject({status: 'reverted', revertedById: admin.user.id, revertSummary: expect.objectContaining({edgeId: originalId, provenanceVersion: 0})})
    // Reverted once.
    expect((await previewFor(hub, body, admin.token)).preview.hops[0]).toMatchObject({outcome: 'refused', reason: 'not_adopted'})
  })

  it('an ambiguous original of a recognized record needs confirmOriginalEdgeIds naming one of the candidates', async () => {
    const {agentId, recordId, originalId, extras} = await recognizedAgent('recognized-ambiguous', 1)
    const ambiguous = await previewFor(hub, {operation: 'revert', recordIds: [recordId]}, admin.token)
    expect(ambiguous.preview.hops[0]).toMatchObject({outcome: 'refused', reason: 'original_ambiguous', originalEdgeId: null})
    const refused = await post('commits', ambiguous.commitBody)
    expect(refused.status).toBe(422)
    expect(refused.body.error.code).toBe('unrevertable_record')
    // A confirmation naming an edge that is not a candidate settles nothing.
    const wrong = await previewFor(hub, {operation: 'revert', recordIds: [recordId], confirmOriginalEdgeIds: {[recordId]: newId()}}, admin.token)
    expect(wrong.preview.hops[0]).toMatchObject({outcome: 'refused', reason: 'original_unavailable'})
    const body = {operation: 'revert', recordIds: [recordId], confirmOriginalEdgeIds: {[recordId]: extras[0]}}
    const {preview, commitBody} = await previewFor(hub, body, admin.token)
    expect(preview.hops[0]).toMatchObject({outcome: 'revert', originalEdgeId: extras[0]})
    expect((await post('commits', commitBody)).status).toBe(200)
    expect((await hub.store.delegationEdges.activeFor(agentId)).map((e) => e.id)).toEqual([extras[0]])
    expect((await hub.store.delegationEdges.get(originalId))!.active).toBe(false)
  })
})

/**
 * An admin commit in the window the spec allows (SPEC "Start-up migration run" 6: the first
 * start's snapshot failed, the Hub serves, and the next start takes the snapshot including edges
 * written in between): the next snapshot records the adopted edge as `recognized`. Two records
 * then point at that adopted edge, the commit's `adopted` record and the cohort's `recognized`
 * one; the edge is reverted once and one revert marks both reverted, whichever is asked for
 * ("Adoption record and hop": `coveredRecordIds`).
 */
describeEachDialect('delegation adoption admin: a recognized cohort record and the commit that adopted its edge', (dialect) => {
  const t = hubDbPerTest(dialect)

  async function adoptedBeforeSnapshot() {
    await buildLegacyFixture({driver: t.db.driver, url: t.db.url, agents: 6, depth: 2, seed: 3, tokens: false})
    let hub = await t.start({delegationStartup: {beforeSnapshot: () => Promise.reject(new Error('injected snapshot failure'))}})
    const admin = await createUser(hub, {systemAdmin: true})
    const scopeAgent = (await hub.request('GET', ADOPTION, {token: admin.token})).body.notInCohort.find((h: {delegator: {kind: string}}) => h.delegator.kind === 'user')
    const body = {operation: 'adopt', scope: {agentIds: [scopeAgent.agentId]}}
    const {commitBody} = await previewFor(hub, body, admin.token)
    const c = await hub.request('POST', `${ADOPTION}/commits`, {body: commitBody, token: admin.token})
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    const committed = (await hub.store.delegationAdoptions.get(c.body.recordIds[0]))!
    // The next start takes the snapshot: the adopted edge is recognized.
    hub = await t.start()
    const admin2 = await createUser(hub, {systemAdmin: true})
    const recognized = (await hub.store.delegationAdoptions.list()).find((r) => r.delegateAgentId === scopeAgent.agentId && r.origin === 'startup_migration')!
    expect(recognized).toMatchObject({status: 'recognized', originalEdgeId: committed.adoptedEdgeId})
    return {hub, token: admin2.token, userId: admin2.user.id, agentId: scopeAgent.agentId as string, committed, recognized}
  }

  for (const asked of ['committed', 'recognized', 'both'] as const) {
    it(`reverting ${asked === 'both' ? 'both records' : `the ${asked} record`} reverts the edge once and marks both records reverted`, async () => {
      const s = await adoptedBeforeSnapshot()
      const ask = asked === 'committed' ? [s.committed] : asked === 'recognized' ? [s.recognized] : [s.committed, s.recognized]
      const covered = [s.committed, s.recognized].filter((r) => !ask.includes(r)).map((r) => r.id)
      const {preview, commitBody} = await previewFor(s.hub, {operation: 'revert', recordIds: ask.map((r) => r.id)}, s.token)
      const lead = ask.map((r) => r.id).sort()[0]
      expect(preview.hops).toEqual([expect.objectContaining({outcome: 'revert', reason: null, edgeId: s.committed.adoptedEdgeId, originalEdgeId: s.committed.originalEdgeId, recordId: lead, coveredRecordIds: covered})])
      expect(preview.coveredRecordIds).toEqual(covered)
      const c = await s.hub.request('POST', `${ADOPTION}/commits`, {body: commitBody, token: s.token})
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      expect(c.body).toMatchObject({hops: 1, coveredRecords: covered.length})
      expect([...c.body.recordIds].sort()).toEqual([s.committed.id, s.recognized.id].sort())
      expect((await s.hub.store.delegationEdges.activeFor(s.agentId)).map((e) => e.id)).toEqual([s.committed.originalEdgeId])
      for (const r of [s.committed, s.recognized]) {
        expect(await s.hub.store.delegationAdoptions.get(r.id), r.id).toMatchObject({status: 'reverted', revertedByKind: 'user', revertedById: s.userId, actorKind: r.actorKind, actorId: r.actorId, revertSummary: expect.objectContaining({edgeId: s.committed.originalEdgeId})})
      }
      // The restored row is adoptable again, by a new preview and commit.
      const again = await previewFor(s.hub, {operation: 'adopt', scope: {agentIds: [s.agentId]}}, s.token)
      expect(again.preview.hops).toEqual([expect.objectContaining({agentId: s.agentId, edgeId: s.committed.originalEdgeId, outcome: 'adopt'})])
      expect((await s.hub.request('POST', `${ADOPTION}/commits`, {body: again.commitBody, token: s.token})).status).toBe(200)
    })
  }
})
