import pino from 'pino'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {createStatusWriter} from '../../src/domain/agents/status-writer.js'
import {systemClock} from '../../src/domain/shared/clock.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'

/**
 * The status writer on a real database: a read that began before a batch committed still sees
 * the reports in it, whichever side of the commit its row came from. On PostgreSQL the read runs
 * on another connection, so its row can predate the commit while the batch has left memory.
 */
describeEachDialect('agents: status reports stay visible across their flush', (dialect) => {
  let hub: FakeBrokerHub
  let agentId: string

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect)
    const r = await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name: 'writer', harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    agentId = r.body.agent.id
  })
  afterAll(() => hub?.dispose())

  // Not eager, and the interval far off: only the test flushes.
  const writer = () => createStatusWriter({store: hub.store, clock: systemClock, logger: pino({level: 'silent'}), config: hub.config}, {intervalMs: 3_600_000, eager: false})

  it('a row read before the commit gets the committed batch overlaid; a read after the commit needs none', async () => {
    const w = writer()
    w.report(agentId, {activity: 'thinking', detail: 'pondering'})
    const mark = w.readMark()
    const before = await hub.store.agents.get(agentId)
    expect(before).toMatchObject({activity: 'idle'})
    await w.flush()
    // The read above returns after the commit: the overlay still carries the report.
    expect(w.pendingFor(agentId, mark)).toMatchObject({activity: 'thinking', detail: 'pondering'})
    const after = await hub.store.agents.get(agentId)
    expect(after).toMatchObject({activity: 'thinking', detail: 'pondering'})
    expect(w.pendingFor(agentId, w.readMark())).toBeUndefined()
    await w.close()
  })

  it('later reports win over a committed batch; forget drops every layer', async () => {
    const w = writer()
    w.report(agentId, {activity: 'executing', detail: 'first'})
    const mark = w.readMark()
    await w.flush()
    w.report(agentId, {detail: 'second'})
    expect(w.pendingFor(agentId, mark)).toMatchObject({activity: 'executing', detail: 'second'})
    expect(w.pendingFor(agentId)).toEqual({heartbeatAt: expect.any(String), detail: 'second'})
    w.forget(agentId)
    expect(w.pendingFor(agentId, mark)).toBeUndefined()
    await w.close()
  })

  it('every change of activity within one batch is written, in order, as an agent event; repeats merge', async () => {
    const w = writer()
    const from = await hub.store.agentEvents.latestSeq()
    w.report(agentId, {activity: 'thinking', detail: ''})
    w.report(agentId, {activity: 'executing', detail: 'Bash: ls'})
    w.report(agentId, {activity: 'waiting_for_input', detail: 'Permission: Bash: rm -rf build'})
    // The same activity again (a later notification): one step, its detail kept.
    w.report(agentId, {activity: 'waiting_for_input'})
    w.report(agentId, {})
    w.report(agentId, {activity: 'thinking', detail: ''})
    w.report(agentId, {activity: 'idle'})
    expect(w.pendingFor(agentId)).toMatchObject({activity: 'idle', detail: ''})
    await w.flush()
    const events = (await hub.store.agentEvents.since(from)).filter((e) => e.agentId === agentId)
    expect(events.map((e) => [e.activity, e.detail])).toEqual([
      ['thinking', ''],
      ['executing', 'Bash: ls'],
      ['waiting_for_input', 'Permission: Bash: rm -rf build'],
      ['thinking', ''],
      ['idle', ''],
    ])
    expect(await hub.store.agents.get(agentId)).toMatchObject({activity: 'idle', detail: ''})
    await w.close()
  })

  it('one agent holds at most eight pending steps: past it, the oldest fold into one; bare heartbeats join the step before', async () => {
    const w = writer()
    const from = await hub.store.agentEvents.latestSeq()
    const activities = ['thinking', 'executing', 'waiting_for_input', 'idle', 'thinking', 'executing', 'idle', 'thinking', 'executing', 'idle']
    activities.forEach((activity, i) => {
      w.report(agentId, {activity, detail: `step ${i}`})
      w.report(agentId, {})
    })
    await w.flush()
    const events = (await hub.store.agentEvents.since(from)).filter((e) => e.agentId === agentId)
    // Ten changes: the three oldest fold into one step (the latest of their fields), seven keep theirs.
    expect(events.map((e) => e.detail)).toEqual(['step 2', 'step 3', 'step 4', 'step 5', 'step 6', 'step 7', 'step 8', 'step 9'])
    expect(await hub.store.agents.get(agentId)).toMatchObject({activity: 'idle', detail: 'step 9'})
    await w.close()
  })

  it('settleApprovals runs after the commit and before the answers, only for an agent that reported a settling activity and has a pending approval; its failure answers them with it', async () => {
    const calls: Array<[string, string]> = []
    let fail = false
    const w = createStatusWriter(
      {store: hub.store, clock: systemClock, logger: pino({level: 'silent'}), config: hub.config},
      {
        intervalMs: 3_600_000,
        eager: false,
        settleApprovals: {
          activities: new Set(['thinking', 'idle']),
          settle: async (id) => {
            // What a read sees then: the batch is committed.
            calls.push([id, (await hub.store.agents.get(id))!.detail])
            if (fail) throw new Error('settle failed')
          },
        },
      },
    )
    // No approval pending: the batch's read finds none, nothing to settle.
    await Promise.all([w.report(agentId, {activity: 'thinking', detail: 'a'}), w.flush()])
    expect(calls).toEqual([])
    const t = new Date().toISOString()
    const pending = (id: string) => ({id, agentId, agentName: 'writer', projectId: 'default', tool: 'Bash', summary: 'ls', input: {}, state: 'pending' as const, createdAt: t, expiresAt: new Date(Date.now() + 600_000).toISOString(), decidedBy: null, decidedAt: null, reason: null})
    await hub.store.approvals.insert(pending(`apr-${dialect}-1`), null)
    // A batch with no settling activity (bare heartbeats, `executing`) leaves it pending.
    await Promise.all([w.report(agentId, {}), w.report(agentId, {activity: 'executing', detail: 'b'}), w.flush()])
    expect(calls).toEqual([])
    // One call for the agent however many settling reports the batch holds.
    const answers = [w.report(agentId, {activity: 'thinking', detail: 'c'}), w.report(agentId, {activity: 'idle', detail: 'd'}), w.report(agentId, {})]
    await w.flush()
    await Promise.all(answers)
    expect(calls).toEqual([[agentId, 'd']])
    await hub.store.approvals.insert(pending(`apr-${dialect}-2`), null)
    fail = true
    const failing = w.report(agentId, {activity: 'thinking', detail: 'e'})
    await w.flush()
    await expect(failing).rejects.toThrow('settle failed')
    // Stored all the same, and not written again.
    expect(await hub.store.agents.get(agentId)).toMatchObject({activity: 'thinking', detail: 'e'})
    expect(w.pendingFor(agentId)).toBeUndefined()
    await w.close()
  })

  it('settleApprovals: a settling report whose round failed settles when its steps are written again (its caller already answered)', async () => {
    const settled: string[] = []
    let down = true
    const store = Object.create(hub.store)
    store.statusTransaction = async (fn: any) => {
      if (down) throw new Error('database down')
      return hub.store.statusTransaction(fn)
    }
    const w = createStatusWriter(
      {store, clock: systemClock, logger: pino({level: 'silent'}), config: hub.config},
      {intervalMs: 3_600_000, eager: false, settleApprovals: {activities: new Set(['idle']), settle: async (id) => void settled.push(id)}},
    )
    const t = new Date().toISOString()
    await hub.store.approvals.insert({id: `apr-${dialect}-retry`, agentId, agentName: 'writer', projectId: 'default', tool: 'Bash', summary: 'ls', input: {}, state: 'pending', createdAt: t, expiresAt: new Date(Date.now() + 600_000).toISOString(), decidedBy: null, decidedAt: null, reason: null}, null)
    const first = w.report(agentId, {activity: 'idle', detail: 'retried'})
    await w.flush()
    await expect(first).rejects.toThrow('database down')
    expect(settled).toEqual([])
    down = false
    // The next round has no caller waiting: the kept step is written and settles all the same.
    await w.flush()
    expect(await hub.store.agents.get(agentId)).toMatchObject({activity: 'idle', detail: 'retried'})
    expect(settled).toEqual([agentId])
    await w.close()
  })

  it('a liveOnly report is written only on a live agent: refused in the write (409), never overlaid, still checked after a failed round', async () => {
    const other = (await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name: 'writer-stopped', harnessConfig: 'shell'}})).body.agent.id as string
    expect((await hub.request('POST', `/api/v1/agents/${other}/stop`)).body.agent.phase).toBe('stopped')
    let down = true
    const store = Object.create(hub.store)
    store.statusTransaction = async (fn: any) => {
      if (down) throw new Error('database down')
      return hub.store.statusTransaction(fn)
    }
    const w = createStatusWriter({store, clock: systemClock, logger: pino({level: 'silent'}), config: hub.config}, {intervalMs: 3_600_000, eager: false})
    const refused = w.report(other, {phase: 'running', activity: 'executing', detail: 'back from the dead'}, {liveOnly: true})
    const taken = w.report(agentId, {activity: 'executing', detail: 'live'}, {liveOnly: true})
    expect(w.pendingFor(other)).toBeUndefined()
    // A failed round answers both with the error and keeps them, still to be checked.
    await w.flush()
    await expect(refused).rejects.toThrow('database down')
    await expect(taken).rejects.toThrow('database down')
    expect(w.pendingFor(other)).toBeUndefined()
    down = false
    const again = w.report(other, {detail: 'still here'}, {liveOnly: true})
    await w.flush()
    await expect(again).rejects.toMatchObject({code: 'agent_not_running', status: 409, details: {phase: 'stopped'}})
    expect(await hub.store.agents.get(other)).toMatchObject({phase: 'stopped', activity: null})
    expect(await hub.store.agents.get(agentId)).toMatchObject({phase: 'running', activity: 'executing', detail: 'live'})
    await w.close()
  })

  it('a failed write keeps the steps for the next round, at most eight of them, and not those of an agent forgotten meanwhile', async () => {
    let down = true
    let gate: () => void = () => {}
    const store = Object.create(hub.store)
    store.statusTransaction = async (fn: any) => {
      await new Promise<void>((r) => (gate = r))
      if (down) throw new Error('database down')
      return hub.store.statusTransaction(fn)
    }
    const w = createStatusWriter({store, clock: systemClock, logger: pino({level: 'silent'}), config: hub.config}, {intervalMs: 3_600_000, eager: false})
    const from = await hub.store.agentEvents.latestSeq()
    // Three rounds of a failing database, each with four changes of activity.
    const activities = ['thinking', 'executing', 'waiting_for_input', 'idle']
    for (let round = 0; round < 3; round++) {
      for (const activity of activities) w.report(agentId, {activity, detail: `${activity} ${round}`})
      const flushed = w.flush()
      gate()
      await flushed
    }
    down = false
    const flushed = w.flush()
    gate()
    await flushed
    const events = (await hub.store.agentEvents.since(from)).filter((e) => e.agentId === agentId)
    expect(events.length).toBeLessThanOrEqual(8)
    // The newest changes kept their own events, and the row holds the last report.
    expect(events.slice(-4).map((e) => e.detail)).toEqual(['thinking 2', 'executing 2', 'waiting_for_input 2', 'idle 2'])
    expect(await hub.store.agents.get(agentId)).toMatchObject({activity: 'idle', detail: 'idle 2'})

    // An agent forgotten while its batch fails is not written at the next round.
    down = true
    w.report(agentId, {activity: 'thinking', detail: 'stale'})
    const failing = w.flush()
    const settled = w.forget(agentId)
    gate()
    await failing
    await settled
    expect(w.pendingFor(agentId)).toBeUndefined()
    down = false
    const next = w.flush()
    gate()
    await next
    expect(await hub.store.agents.get(agentId)).toMatchObject({activity: 'idle', detail: 'idle 2'})
    await w.close()
  })
})
