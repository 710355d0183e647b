import {spawn} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import pino from 'pino'
import {describe, expect, it} from 'vitest'
import {loadWorld, planAdoption} from '../../src/domain/delegation/planner.js'
import {runStartupAdoption} from '../../src/domain/delegation/startup-adoption.js'
import {systemClock} from '../../src/domain/shared/clock.js'
import type {Store} from '../../src/store/store.js'
import {describeEachDialect} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {buildLegacyFixture} from '../helpers/legacy-fixture.js'
import {createHubDb, hubDbPerTest, openStoreOn} from '../helpers/restart-hub.js'

const silent = pino({level: 'silent'})

/**
 * The start-up pass plans each hop on the world it loaded once, re-reading nothing while the
 * database says nothing was committed elsewhere (SQLite's change mark). A commit by another
 * connection after the load must still be seen by every later hop: here the parent of an
 * adoptable child is deleted by another connection after the pass began, and the child is not
 * adopted under it (SPEC "Adoption record and hop": re-plan against current state).
 */
describeEachDialect('delegation start-up pass: a change committed elsewhere during the pass', (dialect) => {
  const t = hubDbPerTest(dialect)

  it('a later hop is re-planned on the changed state, not on the world loaded before', async () => {
    await buildLegacyFixture({driver: t.db.driver, url: t.db.url, agents: 30, depth: 3, seed: 5, tokens: false})
    const store = await openStoreOn(t.db)
    const other = await openStoreOn(t.db)
    try {
      const plan = planAdoption(await loadWorld(store))
      const adopt = new Map(plan.filter((h) => h.outcome === 'adopt').map((h) => [h.agentId, h]))
      // An adoptable child whose agent parent is adoptable too (and so comes first, top-down).
      const child = [...adopt.values()].find((h) => h.delegator?.kind === 'agent' && adopt.has(h.delegator.id))!
      expect(child).toBeDefined()
      const parentId = child.delegator!.id
      let transactions = 0
      // Each hop is one pass transaction; before the first hop's, another connection commits.
      const wrapped: Store = {
        ...store,
        passTransaction: async (fn) => {
          if (++transactions === 1) await other.agents.update(parentId, {deletedAt: new Date().toISOString()}, new Date().toISOString())
          return store.passTransaction(fn)
        },
      }
      const result = await runStartupAdoption(wrapped, systemClock, silent)
      expect(result.tookSnapshot).toBe(true)
      expect(transactions).toBeGreaterThan(1)
      const records = await store.delegationAdoptions.list()
      const of = (agentId: string) => records.find((r) => r.delegateAgentId === agentId)!
      expect(of(child.agentId)).toMatchObject({status: 'skipped_changed', reason: 'ancestor_not_adopted', adoptedEdgeId: null})
      expect((await store.delegationEdges.activeFor(child.agentId)).map((e) => [e.id, e.provenanceVersion])).toEqual([[child.edgeId, 0]])
      // The other hops were adopted as usual (control): every adoptable hop outside the deleted parent's subtree.
      expect(records.filter((r) => r.status === 'adopted').length).toBeGreaterThan(adopt.size / 2)
    } finally {
      await other.close()
      await store.close()
    }
  })
})

/**
 * "One transaction per hop" (SPEC "Start-up migration run"): a Hub killed in the middle of the
 * pass leaves each hop either fully adopted (original deactivated, adopted edge, record) or not
 * touched at all (still pending, original the only active edge), on a real SQLite file with the
 * pass in a process killed with SIGKILL. The next start adopts the rest, and its pass ends with
 * one audit record counting the hops it adopted (the killed pass never reached its end: none).
 */
describe('delegation start-up pass: killed mid-pass [sqlite]', () => {
  const CHILD = fileURLToPath(new URL('../helpers/startup-pass-child.ts', import.meta.url))

  it('each hop is all written or not at all, and the next run finishes the pass', async () => {
    const db = await createHubDb('sqlite')
    let store: Store | null = null
    try {
      await buildLegacyFixture({driver: 'sqlite', url: db.url, agents: 6000, depth: 4, seed: 3, tokens: false})
      store = await openStoreOn(db)
      const adoptable = planAdoption(await loadWorld(store)).filter((h) => h.outcome === 'adopt')
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, db.url], {stdio: ['ignore', 'pipe', 'pipe']})
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (out += d))
      const exited = new Promise<void>((r) => child.once('exit', () => r()))
      try {
        // Some hops are adopted, most are not yet: kill it there.
        const reader = store
        await waitFor(async () => ((await reader.delegationAdoptions.countsByStatus()).adopted ?? 0) >= 20 || child.exitCode !== null, 120_000, 'the pass to adopt its first hops')
      } finally {
        child.kill('SIGKILL')
        await exited
      }
      expect(out).not.toContain('done')
      const killed = await checkEachHop(store, 'killed')
      expect(await store.audit.list('delegation_provenance_adoption_commit', 10)).toEqual([])
      // The next start goes on from the records left pending.
      await runStartupAdoption(store, systemClock, silent)
      const after = await checkEachHop(store, 'finished')
      expect(after.adopted).toBe(adoptable.length)
      expect(after.pending).toBe(0)
      const passes = await store.audit.list('delegation_provenance_adoption_commit', 10)
      expect(passes.map((a) => a.details)).toEqual([{origin: 'startup_migration', hops: after.adopted - killed.adopted, pass: 'adopt'}])
    } finally {
      await store?.close()
      await db.drop()
    }
  }, 300_000)
})

/**
 * Every cohort record's hop is either fully adopted or untouched; answers the counts. After a
 * kill, both kinds must be there (else the kill missed the pass and proves nothing).
 */
async function checkEachHop(store: Store, when: 'killed' | 'finished'): Promise<{adopted: number; pending: number}> {
  const records = (await store.delegationAdoptions.list()).filter((r) => r.status === 'adopted' || r.status === 'pending')
  // A start-up hop writes no audit record of its own (its pass writes one at its end).
  expect(await store.audit.list('delegation_provenance_adoption', 10)).toEqual([])
  let adopted = 0
  let pending = 0
  for (const r of records) {
    const edges = await store.delegationEdges.forAgent(r.delegateAgentId!)
    const original = edges.find((e) => e.id === r.originalEdgeId)!
    const active = edges.filter((e) => e.active)
    if (r.status === 'adopted') {
      adopted++
      expect(original, r.id).toMatchObject({active: false, deactivationCause: 'provenance_adopted', provenanceVersion: 0})
      expect(active.map((e) => [e.id, e.sourceCredentialKind]), r.id).toEqual([[r.adoptedEdgeId, 'system_migration']])
    } else {
      pending++
      expect(active.map((e) => [e.id, e.provenanceVersion]), r.id).toEqual([[original.id, 0]])
      expect(edges, r.id).toHaveLength(1)
    }
  }
  if (when === 'killed') {
    expect(adopted).toBeGreaterThanOrEqual(20)
    expect(pending).toBeGreaterThan(0)
  }
  return {adopted, pending}
}
