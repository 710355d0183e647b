import {expect, it} from 'vitest'
import {classifyEdge} from '../../src/domain/delegation/edge-class.js'
import {loadWorld, planAdoption, type PlannedHop} from '../../src/domain/delegation/planner.js'
import {ADOPTION_STATUS_ROUTE, COHORT_KEY, MARKER_KEY, OUTCOMES, RETRY_VERSION, type CohortHeader, type Marker} from '../../src/domain/delegation/types.js'
import type {AdoptionRecord} from '../../src/store/repositories/delegation-adoptions.js'
import type {Store} from '../../src/store/store.js'
import {newId} from '../../src/domain/shared/secrets.js'
import {describeEachDialect, type TestHubOptions} from '../helpers/hub.js'
import {buildLegacyFixture, FIXTURE_TIME} from '../helpers/legacy-fixture.js'
import {createUser} from '../helpers/users.js'
import {capturingLogger, hubDbPerTest, openStoreOn} from '../helpers/restart-hub.js'

/**
 * The start-up provenance adoption (SPEC "Start-up migration run", "Adoption record and hop"),
 * from a database as the release before provenance left it (the team's legacy fixture), through
 * real Hub starts on the same database: each `start` is one Hub start, the previous one stopped.
 */
describeEachDialect('delegation start-up migration', (dialect) => {
  const t = hubDbPerTest(dialect)
  const legacy = (anomalies = false) => buildLegacyFixture({driver: t.db.driver, url: t.db.url, agents: 24, depth: 4, seed: 11, anomalies, tokens: false})
  const start = async (opts: TestHubOptions = {}) => (await t.start(opts)).store
  /** The planner's verdict on the database as it is now (before a start: what the cohort must hold). */
  const planNow = async () => {
    const store = await openStoreOn(t.db)
    try {
      const world = await loadWorld(store)
      const plan = planAdoption(world)
      const unrecorded = (h: PlannedHop) => (world.activeEdges.get(h.agentId) ?? []).some((e) => (h.edgeId === null || e.id === h.edgeId) && classifyEdge(e).kind === 'unrecorded')
      return {plan, adopt: plan.filter((h) => h.outcome === 'adopt'), unrecordedExcluded: plan.filter((h) => h.outcome !== 'adopt' && unrecorded(h)).length}
    } finally {
      await store.close()
    }
  }
  const records = async (s: Store) => new Map((await s.delegationAdoptions.list()).map((r) => [r.delegateAgentId, r]))
  const tally = (rs: Iterable<AdoptionRecord>) => {
    const out: Record<string, number> = {}
    for (const r of rs) out[r.status] = (out[r.status] ?? 0) + 1
    return out
  }
  /** The admin status route (team C's) as a system admin on a session sees it. */
  const status = async () => {
    const admin = await createUser(t.hub, {systemAdmin: true})
    const r = await t.hub.request('GET', ADOPTION_STATUS_ROUTE, {token: admin.token})
    expect(r.status).toBe(200)
    return r.body
  }
  const failingWrite = (n: number) => {
    let writes = 0
    return {beforeHopWrite: () => {
      if (++writes === n) throw new Error('injected hop write failure')
    }}
  }
  /** An agent written after the snapshot, with a version-0 edge (another replica of an old build) or a recorded one. */
  const lateAgent = async (s: Store, version: 0 | 1) => {
    const [a] = await s.agents.listPlannerAgents()
    const root = (await s.delegationEdges.listActive()).find((e) => e.delegator.kind === 'user' && e.delegator.id !== 'system/migration')!.delegator
    const id = newId()
    await s.agents.insert({id, projectId: a.projectId, name: `late-${id.slice(0, 6)}`, brokerId: null, phase: 'stopped', activity: null, detail: '', harnessConfig: 'claude', template: null, task: null, role: 'baseline', runtime: null, runtimeRef: null, config: {}, error: null, createdBy: {kind: 'user', id: root.id}, createdAt: FIXTURE_TIME, updatedAt: FIXTURE_TIME})
    const recorded = {sourceCredentialKind: 'session', ceiling: JSON.stringify(['project.read'])}
    await s.delegationEdges.insert({id: newId(), delegateAgentId: id, projectId: a.projectId, delegator: root, role: 'baseline', provenanceVersion: version, sourceCredentialKind: null, ceiling: null, ...(version === 1 && recorded), ceilingPolicy: null, ceilingProjectId: null, initiator: null, createdAt: FIXTURE_TIME})
    return id
  }

  it('first run: one record per examined hop in one snapshot, adoptable hops adopted top-down, the marker, the logs', async () => {
    await legacy(true)
    const {plan, adopt, unrecordedExcluded} = await planNow()
    // The anomalies fixture has every outcome, so every kind of cohort record is checked.
    expect(new Set(plan.map((h) => h.outcome))).toEqual(new Set(OUTCOMES))
    const log = capturingLogger()
    const s = await start({logger: log.logger})
    expect(await s.hubSettings.get<CohortHeader>(COHORT_KEY)).toEqual({takenAt: expect.any(String), recordCount: plan.length})
    const byAgent = await records(s)
    expect(byAgent.size).toBe(plan.length)
    for (const h of plan) {
      const r = byAgent.get(h.agentId)!
      expect(r, h.agentId).toMatchObject({origin: 'startup_migration', originalEdgeId: h.edgeId, beforeFingerprint: h.beforeFingerprint, projectId: h.projectId, depth: h.depth})
      if (h.outcome !== 'adopt') {
        expect(r, h.agentId).toMatchObject({status: h.outcome, reason: h.outcome === 'excluded' ? h.reason : null, adoptedEdgeId: null})
        if (h.edgeId) expect((await s.delegationEdges.get(h.edgeId))!.active).toBe(true)
        continue
      }
      expect(r).toMatchObject({status: 'adopted', reason: null, actorKind: 'system', actorId: 'startup_migration'})
      expect(await s.delegationEdges.get(h.edgeId!)).toMatchObject({active: false, deactivationCause: 'provenance_adopted'})
      const adopted = (await s.delegationEdges.get(r.adoptedEdgeId!))!
      expect(adopted).toMatchObject({active: true, delegator: h.delegator, delegateAgentId: h.agentId, projectId: h.projectId, role: h.role, provenanceVersion: 1, sourceCredentialKind: 'system_migration', initiator: null})
      // The planned V1 ceiling: a child's was planned under its parent's adopted one.
      expect(classifyEdge(adopted)).toEqual({kind: 'recognized', ceiling: h.afterCeiling})
      expect(r.afterSummary).toMatchObject({edgeId: adopted.id, ceiling: h.afterCeiling})
    }
    expect(adopt.length).toBeGreaterThan(0)
    const marker = await s.hubSettings.get<Marker>(MARKER_KEY)
    expect(marker).toEqual({retryVersion: RETRY_VERSION, counts: tally(byAgent.values()), writtenAt: expect.any(String)})
    // No audit record per start-up hop (the record says what the hop did); one for the pass
    // that adopted them, with how many, in its own transaction.
    expect(await s.audit.list('delegation_provenance_adoption', 1000)).toEqual([])
    const passes = await s.audit.list('delegation_provenance_adoption_commit', 1000)
    expect(passes).toHaveLength(1)
    expect(passes[0]).toMatchObject({actor: {kind: 'system', id: 'startup_migration'}, projectId: null, target: null, details: {origin: 'startup_migration', hops: adopt.length, pass: 'adopt'}})
    // Step 8: counts at info; a warning naming the count of unrecorded live hops and the route.
    expect(log.lines.find((l) => String(l.msg).includes('record counts'))).toMatchObject({level: 30, counts: tally(byAgent.values())})
    const warn = log.lines.find((l) => l.level === 40 && String(l.msg).includes(ADOPTION_STATUS_ROUTE))
    expect(unrecordedExcluded).toBeGreaterThan(0)
    expect(warn).toMatchObject({unrecordedHops: unrecordedExcluded, route: ADOPTION_STATUS_ROUTE})
    expect(warn!.msg).toContain(String(unrecordedExcluded))
  })

  it('the status view after the run: status, reason and project filters, counts of every record, limit default 100 and offset', async () => {
    // Enough agents for more than one default page; the anomalies give records of every status and many reasons.
    await buildLegacyFixture({driver: t.db.driver, url: t.db.url, agents: 120, depth: 4, seed: 13, anomalies: true, tokens: false})
    const s = await start()
    const all = await s.delegationAdoptions.list()
    expect(all.length).toBeGreaterThan(100)
    const admin = await createUser(t.hub, {systemAdmin: true})
    const get = async (q: string) => {
      const r = await t.hub.request('GET', `${ADOPTION_STATUS_ROUTE}?${q}`, {token: admin.token})
      expect(r.status, `${q}: ${JSON.stringify(r.body)}`).toBe(200)
      return r.body
    }
    const ids = (rs: Array<{id: string}>) => rs.map((r) => r.id).sort()
    const byReason: Record<string, number> = {}
    for (const r of all) if (r.reason) byReason[r.reason] = (byReason[r.reason] ?? 0) + 1
    const counts = {byStatus: tally(all), byReason}

    const first = await get('')
    expect(first).toMatchObject({snapshotTaken: true, total: all.length, limit: 100, offset: 0, counts})
    expect(first.records).toHaveLength(100)
    const max = await get('limit=500')
    expect(ids(max.records)).toEqual(ids(all))
    // Pages are slices of one order.
    const page = await get('limit=30&offset=90')
    expect(page.records.map((r: {id: string}) => r.id)).toEqual(max.records.slice(90, 120).map((r: {id: string}) => r.id))

    const project = all.find((r) => r.reason === 'cycle')!.projectId!
    const cases: Array<[string, (r: AdoptionRecord) => boolean]> = [
      ['status=excluded', (r) => r.status === 'excluded'],
      ['status=adopted', (r) => r.status === 'adopted'],
      ['reason=root_inactive', (r) => r.reason === 'root_inactive'],
      ['status=excluded&reason=cycle', (r) => r.status === 'excluded' && r.reason === 'cycle'],
      [`projectId=${project}`, (r) => r.projectId === project],
      [`projectId=${project}&status=recognized`, (r) => r.projectId === project && r.status === 'recognized'],
    ]
    for (const [q, keep] of cases) {
      const want = all.filter(keep)
      expect(want.length, q).toBeGreaterThan(0)
      expect(want.length, q).toBeLessThan(all.length)
      const b = await get(`${q}&limit=500`)
      // The filters select the page and its total; the counts always cover every record.
      expect({total: b.total, records: ids(b.records), counts: b.counts}, q).toEqual({total: want.length, records: ids(want), counts})
    }
    expect(await get('status=pending')).toMatchObject({total: 0, records: []})
  })

  it('a hop write that fails stops the run: later hops stay pending, the Hub serves, the next start goes on', async () => {
    await legacy()
    const {adopt} = await planNow()
    expect(adopt.length).toBeGreaterThan(2)
    const log = capturingLogger()
    let s = await start({logger: log.logger, delegationStartup: failingWrite(2)})
    expect((await t.hub.request('GET', '/readyz')).status).toBe(200)
    expect((await t.hub.request('GET', '/api/v1/agents')).status).toBe(200)
    let byAgent = await records(s)
    // Top-down: the first hop (depth, then agent ID) was adopted; the failing second and every later one stay pending.
    expect(byAgent.get(adopt[0].agentId)!.status).toBe('adopted')
    for (const h of adopt.slice(1)) expect(byAgent.get(h.agentId)!.status, h.agentId).toBe('pending')
    expect(await s.hubSettings.get(MARKER_KEY)).toBeNull()
    expect(log.lines.some((l) => l.level === 50 && String(l.msg).includes('hop write failed'))).toBe(true)
    // The pending hops are reported by the status view (and can be adopted by an admin commit).
    expect((await status()).counts.byStatus).toMatchObject({adopted: 1, pending: adopt.length - 1})
    const cohort = await s.hubSettings.get<CohortHeader>(COHORT_KEY)

    s = await start()
    byAgent = await records(s)
    for (const h of adopt) expect(byAgent.get(h.agentId)!.status).toBe('adopted')
    expect(await s.hubSettings.get(COHORT_KEY)).toEqual(cohort)
    expect((await s.hubSettings.get<Marker>(MARKER_KEY))!.retryVersion).toBe(RETRY_VERSION)
  })

  it('the retry pass adopts a child in the same pass as its parent; other skip reasons are not retried', async () => {
    await legacy()
    const {adopt} = await planNow()
    // A user-delegated hop with an adoptable child (the fixture's first agents form a chain).
    const top = adopt.find((h) => h.depth === 0 && adopt.some((c) => c.delegator?.id === h.agentId))!
    const child = adopt.find((h) => h.delegator?.id === top.agentId)!
    const leaf = adopt.find((h) => h.agentId !== top.agentId && h.agentId !== child.agentId && !adopt.some((c) => c.delegator?.id === h.agentId))!
    // Another parent whose edge really changes: its descendants must stay blocked, never adopted under it.
    const mid = adopt.find((h) => h.agentId !== top.agentId && h.agentId !== child.agentId && adopt.some((c) => c.delegator?.id === h.agentId))!
    const below = (id: string): PlannedHop[] => adopt.filter((h) => h.delegator?.id === id).flatMap((h) => [h, ...below(h.agentId)])
    const blocked = below(mid.agentId).filter((h) => h.agentId !== leaf.agentId)
    expect(blocked.length).toBeGreaterThan(0)
    // First start: snapshot taken, the first write fails, every adoptable hop stays pending.
    let s = await start({delegationStartup: failingWrite(1)})
    let byAgent = await records(s)
    // What an earlier build left (SPEC step 9): the top hop wrongly skipped, its child blocked behind it, no marker.
    const now = new Date().toISOString()
    await s.delegationAdoptions.update(byAgent.get(top.agentId)!.id, {status: 'skipped_changed', reason: 'edge_changed'}, now)
    await s.delegationAdoptions.update(byAgent.get(child.agentId)!.id, {status: 'skipped_changed', reason: 'ancestor_not_adopted'}, now)
    await s.delegationAdoptions.update(byAgent.get(leaf.agentId)!.id, {status: 'skipped_changed', reason: 'fingerprint_changed'}, now)
    const [midEdge] = await s.delegationEdges.activeFor(mid.agentId)
    await s.delegationEdges.deactivate(midEdge.id, null, now)
    await s.delegationEdges.insert({...midEdge, id: newId(), createdAt: now})

    s = await start()
    byAgent = await records(s)
    expect(byAgent.get(top.agentId)!.status).toBe('adopted')
    expect(byAgent.get(child.agentId)).toMatchObject({status: 'adopted', reason: null})
    const parentEdge = byAgent.get(top.agentId)!.adoptedEdgeId!
    expect((await s.delegationEdges.get(parentEdge))!.active).toBe(true)
    // fingerprint_changed is never retried: the record and the edge stay as they were.
    expect(byAgent.get(leaf.agentId)).toMatchObject({status: 'skipped_changed', reason: 'fingerprint_changed', adoptedEdgeId: null})
    expect((await s.delegationEdges.get(leaf.edgeId!))!.active).toBe(true)
    expect(byAgent.get(mid.agentId)).toMatchObject({status: 'skipped_changed', reason: 'edge_changed'})
    for (const h of blocked) {
      // Planned adoptable under a parent that is still unrecorded: `ancestor_not_adopted`, edge untouched.
      expect(byAgent.get(h.agentId), h.agentId).toMatchObject({status: 'skipped_changed', reason: 'ancestor_not_adopted'})
      expect((await s.delegationEdges.get(h.edgeId!))!.active).toBe(true)
    }
    const untouched = new Set([leaf, mid, ...blocked].map((h) => h.agentId))
    for (const h of adopt) if (!untouched.has(h.agentId)) expect(byAgent.get(h.agentId)!.status, h.agentId).toBe('adopted')
    expect(await s.hubSettings.get<Marker>(MARKER_KEY)).toMatchObject({retryVersion: RETRY_VERSION, counts: tally(byAgent.values())})
  })

  it('a lower retry_version reruns the retry pass once and rewrites the marker; a failed write leaves it as it was', async () => {
    await legacy()
    const {adopt} = await planNow()
    const top = adopt[0]
    const rootUser = top.delegator!.id
    const underRoot = (h: PlannedHop): boolean => h.delegator?.id === rootUser || adopt.some((p) => p.agentId === h.delegator?.id && underRoot(p))
    const blocked = adopt.filter(underRoot)
    let s = await start({delegationStartup: failingWrite(1)})
    const cohort = await s.hubSettings.get<CohortHeader>(COHORT_KEY)
    // Between starts the root user is suspended: its chains' hops change and are skipped.
    await s.users.update(rootUser, {status: 'suspended'}, new Date().toISOString())
    s = await start()
    let byAgent = await records(s)
    expect(byAgent.get(top.agentId)).toMatchObject({status: 'skipped_changed', reason: 'edge_changed'})
    for (const h of blocked) expect(byAgent.get(h.agentId)!.status).toBe('skipped_changed')
    for (const h of blocked.filter((x) => x.delegator?.kind === 'agent')) expect(byAgent.get(h.agentId)!.reason).toBe('ancestor_not_adopted')
    const first = (await s.hubSettings.get<Marker>(MARKER_KEY))!
    expect(first.retryVersion).toBe(RETRY_VERSION)

    // The user is restored; a current marker means no retry pass at the next start.
    await s.users.update(rootUser, {status: 'active'}, new Date().toISOString())
    s = await start()
    expect((await records(s)).get(top.agentId)!.status).toBe('skipped_changed')
    expect(await s.hubSettings.get(MARKER_KEY)).toEqual(first)

    // A marker from a build with a lower retry_version: the pass runs, but its first write fails.
    const old: Marker = {...first, retryVersion: 0}
    await s.hubSettings.put(MARKER_KEY, old, new Date().toISOString())
    s = await start({delegationStartup: failingWrite(1)})
    expect(await s.hubSettings.get(MARKER_KEY)).toEqual(old)
    expect((await records(s)).get(top.agentId)!.status).toBe('skipped_changed')

    s = await start()
    byAgent = await records(s)
    for (const h of blocked) expect(byAgent.get(h.agentId), h.agentId).toMatchObject({status: 'adopted', reason: null})
    const rewritten = (await s.hubSettings.get<Marker>(MARKER_KEY))!
    expect(rewritten).toMatchObject({retryVersion: RETRY_VERSION, counts: tally(byAgent.values())})
    expect(rewritten.counts.skipped_changed).toBeUndefined()
    // No new snapshot: same header, same records.
    expect(await s.hubSettings.get(COHORT_KEY)).toEqual(cohort)
    expect(byAgent.size).toBe(cohort!.recordCount)
  })

  it('a failed snapshot leaves none (the Hub serves); the next start takes it, with edges written in between', async () => {
    await legacy()
    const log = capturingLogger()
    let s = await start({logger: log.logger, delegationStartup: {beforeSnapshot: () => Promise.reject(new Error('injected snapshot failure'))}})
    expect((await t.hub.request('GET', '/readyz')).status).toBe(200)
    expect(await s.hubSettings.get(COHORT_KEY)).toBeNull()
    expect(await s.hubSettings.get(MARKER_KEY)).toBeNull()
    expect(await s.delegationAdoptions.count()).toBe(0)
    expect(log.lines.some((l) => l.level === 50 && String(l.msg).includes('snapshot failed'))).toBe(true)
    const before = await status()
    expect(before).toMatchObject({snapshotTaken: false, cohort: null, marker: null, total: 0})
    expect(before.notInCohort.length).toBe((await planNow()).adopt.length)
    const v0 = await lateAgent(s, 0)
    const v1 = await lateAgent(s, 1)
    const {plan} = await planNow()

    s = await start()
    const byAgent = await records(s)
    expect(await s.hubSettings.get(COHORT_KEY)).toMatchObject({recordCount: plan.length})
    expect(byAgent.get(v0)!.status).toBe('adopted')
    expect(byAgent.get(v1)!.status).toBe('recorded')
    expect(await status()).toMatchObject({snapshotTaken: true, notInCohort: []})
  })

  it('a restart never takes a second snapshot: edges written after it stay out of the cohort, and the warning counts them', async () => {
    await legacy()
    const {unrecordedExcluded} = await planNow()
    let s = await start()
    const cohort = await s.hubSettings.get<CohortHeader>(COHORT_KEY)
    const count = await s.delegationAdoptions.count()
    const marker = await s.hubSettings.get(MARKER_KEY)
    const v0 = await lateAgent(s, 0)
    const v1 = await lateAgent(s, 1)

    const log = capturingLogger()
    s = await start({logger: log.logger})
    expect(await s.hubSettings.get(COHORT_KEY)).toEqual(cohort)
    expect(await s.delegationAdoptions.count()).toBe(count)
    expect(await s.hubSettings.get(MARKER_KEY)).toEqual(marker)
    const byAgent = await records(s)
    expect(byAgent.has(v0)).toBe(false)
    expect(byAgent.has(v1)).toBe(false)
    const [edge] = await s.delegationEdges.activeFor(v0)
    expect(classifyEdge(edge).kind).toBe('unrecorded')
    expect((await status()).notInCohort.map((h: PlannedHop) => h.agentId)).toEqual([v0])
    expect(log.lines.find((l) => l.level === 40 && String(l.msg).includes(ADOPTION_STATUS_ROUTE))).toMatchObject({unrecordedHops: unrecordedExcluded + 1})
  })
})
