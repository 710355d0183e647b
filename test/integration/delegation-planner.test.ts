import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {loadWorld, planAdoption, planFingerprint, type PlannedHop, type World} from '../../src/domain/delegation/planner.js'
import {EXCLUSION_REASONS, MAX_WALK_DEPTH, OUTCOMES} from '../../src/domain/delegation/types.js'
import {createDb} from '../../src/store/create-db.js'
import {migrate} from '../../src/store/migrate.js'
import {agentConfigFactsOfText} from '../../src/store/agent-config-facts.js'
import type {EdgeFacts} from '../../src/store/repositories/delegation-edges.js'
import {openStore, type Store} from '../../src/store/store.js'
import {describeEachDialect, startTestHub} from '../helpers/hub.js'
import {EXPECTED} from '../helpers/legacy-anomalies.js'
import {agentRow, buildLegacyFixture, type LegacyFixture} from '../helpers/legacy-fixture.js'
import {createPgSchema} from '../helpers/pg.js'

/**
 * The planner's verdicts over a database written by the legacy fixture builder with
 * --anomalies (a release from before provenance, plus one planted hop per outcome, per
 * exclusion reason and per rule-order case), read back through loadWorld on each database.
 */
describeEachDialect('delegation planner over the legacy fixture', (dialect) => {
  let target: {driver: 'sqlite' | 'postgres'; url: string; drop: () => Promise<void>}
  let fixture: LegacyFixture
  let store: Store
  let world: World
  let hops: PlannedHop[]
  const hopOf = (agentId: string) => hops.find((h) => h.agentId === agentId)

  beforeAll(async () => {
    if (dialect === 'postgres') {
      const s = await createPgSchema()
      target = {driver: 'postgres', url: s.url, drop: s.drop}
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'svc-legacy-'))
      target = {driver: 'sqlite', url: join(dir, 'legacy.db'), drop: async () => rmSync(dir, {recursive: true, force: true})}
    }
    fixture = await buildLegacyFixture({driver: target.driver, url: target.url, agents: 80, depth: 5, seed: 42, anomalies: true})
    store = await openStore({driver: target.driver, url: target.url})
    // The schema of the current release, as a Hub start brings it (the planner reads it); the
    // start-up data migration does not run, so every hop is as the older release left it.
    await store.migrate()
    world = await loadWorld(store)
    hops = planAdoption(world)
  })
  afterAll(async () => {
    await store?.close()
    await target?.drop()
  })

  it('the fixture plants every outcome and every exclusion reason (so none can go untested)', () => {
    const planted = Object.keys(fixture.planted)
    expect(planted.sort()).toEqual(Object.keys(EXPECTED).sort())
    const verdicts = planted.map((k) => EXPECTED[k])
    for (const o of OUTCOMES) expect(verdicts.some(([outcome]) => outcome === o), o).toBe(true)
    for (const r of EXCLUSION_REASONS) expect(verdicts.some(([, reason]) => reason === r), r).toBe(true)
  })

  const cases = Object.entries(EXPECTED)
  it.each(cases.filter(([k]) => !k.includes('>')))('planted %s: the planner gives %j', (key, expected) => {
    const h = hopOf(fixture.planted[key])
    expect(h, key).toBeDefined()
    expect([h!.outcome, h!.reason]).toEqual(expected)
  })

  it.each(cases.filter(([k]) => k.includes('>')))('two rules fail at once (%s): the first in rule order is the reason', (key, expected) => {
    const h = hopOf(fixture.planted[key])!
    expect([h.outcome, h.reason]).toEqual(expected)
  })

  it('only adopt hops carry an after-ceiling; recorded and recognized hops show their stored ceiling', () => {
    for (const h of hops) expect(h.afterCeiling === null, `${h.agentId} ${h.outcome}`).toBe(h.outcome !== 'adopt')
    expect(hopOf(fixture.planted.recorded)!.beforeCeiling).toEqual(['project.read'])
    expect(hopOf(fixture.planted.recognized_above_policy)!.beforeCeiling).toContain('secret.use')
    expect(hopOf(fixture.planted.adopt)!.beforeFingerprint).toMatch(/^[0-9a-f]{64}$/)
  })

  it('regular chains: top-down order, and every adopted child stays inside its parent ceiling (rule 3)', () => {
    const index = new Map(hops.map((h, i) => [h.agentId, i]))
    let children = 0
    for (const h of hops) {
      if (h.delegator?.kind !== 'agent' || h.outcome !== 'adopt') continue
      const parent = hops[index.get(h.delegator.id)!]
      expect(index.get(h.delegator.id)!).toBeLessThan(index.get(h.agentId)!)
      expect(h.depth).toBe(parent.depth + 1)
      for (const p of h.afterCeiling!) expect(parent.afterCeiling ?? parent.beforeCeiling).toContain(p)
      children++
    }
    expect(children).toBeGreaterThan(10)
    // The regular population (outside the anomalies' project, whose deep chain goes to 31) has chains of --depth 5.
    const anomalies = world.agents.get(fixture.planted.adopt)!.projectId
    expect(Math.max(...hops.filter((h) => h.outcome === 'adopt' && h.projectId !== anomalies).map((h) => h.depth))).toBe(4)
  })

  it('the closure: stopped agents are planned, deleted ones are not; an agent scope pulls in its ancestors only', () => {
    const deleted = [...world.agents.values()].filter((a) => a.deleted)
    expect(deleted.length).toBeGreaterThan(0)
    for (const a of deleted) expect(hopOf(a.id)).toBeUndefined()
    const tooDeep = fixture.planted.too_deep
    const chain = planAdoption(world, {agentIds: [tooDeep]})
    expect(chain).toHaveLength(MAX_WALK_DEPTH + 1)
    expect(chain.map((h) => h.depth)).toEqual([...Array(MAX_WALK_DEPTH + 1).keys()])
    const home = world.agents.get(tooDeep)!.projectId
    expect(planAdoption(world, {projectId: home}).every((h) => h.projectId === home)).toBe(true)
  })

  it('no timestamp matters: rewriting every edge and agent time as odd text plans the same, same fingerprint', async () => {
    const before = planFingerprint('adopt', hops)
    // A second connection writes what earlier builds could leave: non-canonical timestamp text.
    const raw = await createDb({driver: target.driver, url: target.url})
    try {
      await raw.db.updateTable('delegation_edges').set({updated_at: '2025-6-1 0:00:00+02', created_at: 'Sun, 01 Jun 2025 00:00:00 GMT'}).execute()
      await raw.db.updateTable('agents').set({updated_at: '1.6.2025'}).execute()
    } finally {
      await raw.close()
    }
    const again = planAdoption(await loadWorld(store))
    expect(again.map((h) => h.beforeFingerprint)).toEqual(hops.map((h) => h.beforeFingerprint))
    expect(planFingerprint('adopt', again)).toBe(before)
  })

  it('loadWorld reads the config facts of agents written by an older release as agentConfigFacts decides them, after the migration', async () => {
    const configs = ['{broken', 'null', '[1]', '"text"', '{}', '{"applied":null}', '{"applied":[]}', '{"applied":"x"}', '{"applied":{}}',
      '{"applied":{"defaultAgentRole":{"value":5}}}', '{"applied":{"defaultAgentRole":{"value":"readonly"}}}', '{"applied":{"defaultAgentRole":"full"}}',
      '{"applied":{"defaultCloudIdentityMode":{"value":"Assign"}}}', '{"applied":{"defaultCloudIdentityMode":{"value":"Assign"},"defaultCloudIdentityServiceAccountId":{"value":""}}}',
      '{"applied":{"defaultCloudIdentityMode":{"value":"Assign"},"defaultCloudIdentityServiceAccountId":{"value":"sa@x"}}}',
      '{"applied":{"defaultCloudIdentityMode":{"value":"assign"},"defaultCloudIdentityServiceAccountId":{"value":"sa@x"}}}',
      '{"applied":{"defaultCloudIdentityMode":{"value":"Assign"},"defaultCloudIdentityServiceAccountId":{"value":7}}}']
    // A database of its own at the schema before the facts had columns, holding these configs.
    const own = dialect === 'postgres' ? await createPgSchema() : (() => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-configs-'))
      return {url: join(dir, 'hub.db'), drop: async () => rmSync(dir, {recursive: true, force: true})}
    })()
    const rows = configs.map((config, i) => agentRow({id: `odd-config-${i}`, projectId: 'p', name: `odd-config-${i}`, role: 'baseline', creator: {kind: 'user', id: 'u'}, config}))
    const raw = await createDb({driver: target.driver, url: own.url})
    try {
      await migrate(raw, {upTo: '0012-adoption-original-covering'})
      await raw.db.insertInto('agents').values(rows).execute()
    } finally {
      await raw.close()
    }
    const s = await openStore({driver: target.driver, url: own.url})
    try {
      await s.migrate()
      const w = await loadWorld(s)
      for (const r of rows) {
        const f = agentConfigFactsOfText(r.config)
        const {appliedRole, assignModeServiceAccount, configReadable} = w.agents.get(r.id)!
        // The applied role falls back to the agent's role when the config names none.
        expect({appliedRole, assignModeServiceAccount, configReadable}, r.config).toEqual({appliedRole: f.readable ? (f.appliedRole ?? r.role) : null, assignModeServiceAccount: f.assignModeServiceAccount, configReadable: f.readable})
      }
      expect(w.agents.get('odd-config-0')).toMatchObject({configReadable: false, appliedRole: null})
      expect(w.agents.get('odd-config-10')).toMatchObject({configReadable: true, appliedRole: 'readonly'})
      expect(w.agents.get('odd-config-14')).toMatchObject({configReadable: true, appliedRole: 'baseline', assignModeServiceAccount: true})
    } finally {
      await s.close()
      await own.drop()
    }
  })

  it('the bulk read (SQLite: value arrays, interned texts) builds the same world as the portable reads', async () => {
    // Odd shapes: an edge whose role differs from its agent's, a creator with an empty ID, a
    // creator that is not the edge's delegator, a second active edge in another project.
    const live = [...world.agents.values()].filter((a) => !a.deleted && world.activeEdges.get(a.id)?.length === 1)
    const [roleDiffers, emptyCreator, otherCreator, twoEdges] = live
    const raw = await createDb({driver: target.driver, url: target.url})
    try {
      const edgeOf = (id: string) => raw.db.selectFrom('delegation_edges').selectAll().where('delegate_agent_id', '=', id).where('active', '=', 1).executeTakeFirstOrThrow()
      await raw.db.updateTable('delegation_edges').set({role: roleDiffers.role === 'readonly' ? 'full' : 'readonly'}).where('delegate_agent_id', '=', roleDiffers.id).execute()
      await raw.db.updateTable('agents').set({created_by_id: ''}).where('id', '=', emptyCreator.id).execute()
      await raw.db.updateTable('agents').set({created_by_kind: 'user', created_by_id: fixture.users[1]}).where('id', '=', otherCreator.id).execute()
      const e = await edgeOf(twoEdges.id)
      await raw.db.insertInto('delegation_edges').values({...e, id: `${e.id}-second`, project_id: fixture.projects[1], delegator_kind: 'user', delegator_id: fixture.users[1]}).execute()
    } finally {
      await raw.close()
    }
    const joined = await loadWorld(store)
    const apart = new Map((await store.agents.listPlannerAgents()).map((a) => [a.id, a]))
    const edgesApart = new Map<string, EdgeFacts[]>()
    for (const e of await store.delegationEdges.listActiveFacts()) edgesApart.set(e.delegateAgentId, [...(edgesApart.get(e.delegateAgentId) ?? []), e])
    const byId = (xs: EdgeFacts[] | undefined) => [...(xs ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1))
    expect(joined.agents.size).toBe(apart.size)
    for (const [id, a] of apart) expect(joined.agents.get(id), id).toEqual(a)
    expect(joined.activeEdges.size).toBe(edgesApart.size)
    for (const [id, es] of edgesApart) expect(byId(joined.activeEdges.get(id)), id).toEqual(byId(es))
    expect(joined.agents.get(emptyCreator.id)!.createdBy).toBeNull()
    expect(joined.agents.get(otherCreator.id)!.createdBy).toEqual({kind: 'user', id: fixture.users[1]})
    expect(joined.activeEdges.get(twoEdges.id)).toHaveLength(2)
  })

  it('later bulk reads (ceiling texts seen before answered as codes) still build the portable world', async () => {
    // The planted recognized hop's ceiling was seen by the reads above; move it to another
    // edge, give that edge's ceiling another project, and give one edge a ceiling never seen.
    const recognized = world.activeEdges.get(fixture.planted.recognized)![0]
    const [a, b] = [...world.agents.values()].filter((x) => !x.deleted && world.activeEdges.get(x.id)?.length === 1 && x.id !== fixture.planted.recognized)
    const raw = await createDb({driver: target.driver, url: target.url})
    try {
      const set = (id: string, values: {ceiling: string; source_credential_kind: string; ceiling_policy: string; ceiling_project_id: string; provenance_version: number}) =>
        raw.db.updateTable('delegation_edges').set(values).where('delegate_agent_id', '=', id).where('active', '=', 1).execute()
      await set(a.id, {ceiling: recognized.ceiling!, source_credential_kind: 'system_migration', ceiling_policy: 'v1', ceiling_project_id: fixture.projects[1], provenance_version: 1})
      await set(b.id, {ceiling: '["project.read","skill.list"]', source_credential_kind: 'token', ceiling_policy: 'v2', ceiling_project_id: b.projectId, provenance_version: 1})
    } finally {
      await raw.close()
    }
    for (let read = 0; read < 2; read++) {
      const joined = await loadWorld(store)
      const edgesApart = new Map<string, EdgeFacts[]>()
      for (const e of await store.delegationEdges.listActiveFacts()) edgesApart.set(e.delegateAgentId, [...(edgesApart.get(e.delegateAgentId) ?? []), e])
      const byId = (xs: EdgeFacts[] | undefined) => [...(xs ?? [])].sort((x, y) => (x.id < y.id ? -1 : 1))
      for (const [id, es] of edgesApart) expect(byId(joined.activeEdges.get(id)), id).toEqual(byId(es))
      for (const a of await store.agents.listPlannerAgents()) expect(joined.agents.get(a.id), a.id).toEqual(a)
      expect(joined.activeEdges.get(a.id)![0]).toMatchObject({ceiling: recognized.ceiling, ceilingProjectId: fixture.projects[1], sourceCredentialKind: 'system_migration', ceilingPolicy: 'v1'})
      expect(joined.activeEdges.get(b.id)![0]).toMatchObject({ceiling: '["project.read","skill.list"]', sourceCredentialKind: 'token', ceilingPolicy: 'v2'})
    }
  })

  it('a Hub started on the fixture accepts the agent tokens the builder wrote', async () => {
    const hub = await startTestHub('sqlite', {env: {SVC_SERVER_DATABASE_DRIVER: target.driver, SVC_SERVER_DATABASE_URL: target.url}})
    try {
      const id = fixture.planted.adopt
      const me = await hub.request('GET', '/api/v1/auth/me', {token: fixture.tokens[id]})
      expect(me.status).toBe(200)
      expect(me.body.principal).toMatchObject({kind: 'agent', id})
      expect(me.body.credentialKind).toBe('agent')
    } finally {
      await hub.dispose()
    }
  })
})
