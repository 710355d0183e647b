import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {newId} from '../../src/domain/shared/secrets.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * The children read the tree route walks on PostgreSQL (`agents.childrenOf`) on both
 * databases: the same records as `list({parentIds})` (every field), live ones only, by creation;
 * and the tree route's nodes (on SQLite built as JSON in SQL) equal the agent read field for field.
 */
describeEachDialect('agents: children of a level', (dialect) => {
  let hub: TestHub
  let checkout: string
  beforeAll(async () => {
    hub = await startTestHub(dialect)
    checkout = mkdtempSync(join(tmpdir(), 'svc-children-'))
    execFileSync('git', ['init', '-q', '-b', 'main'], {cwd: checkout})
  })
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  it('reads the live children of the given parents, every field as list reads it', async () => {
    const {project} = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'kids', localPath: checkout}})).body
    const agents = hub.store.agents
    const add = async (name: string, parent: {id: string; name: string} | null, at: string) => {
      const id = newId()
      await agents.insert({id, name, projectId: project.id, brokerId: null, phase: 'stopped', activity: null, detail: 'd', harnessConfig: 'shell', template: null, task: 'the task', role: 'baseline', runtime: null, runtimeRef: null, config: {applied: {a: 1}}, error: null, createdBy: {kind: 'user', id: 'dev-user'}, createdAt: at, updatedAt: at, parent})
      return {id, name}
    }
    const one = await add('one', null, '2026-01-01T00:00:00.000Z')
    const two = await add('two', null, '2026-01-01T00:00:01.000Z')
    const late = await add('late', one, '2026-01-01T00:00:05.000Z')
    const early = await add('early', two, '2026-01-01T00:00:02.000Z')
    const gone = await add('gone', one, '2026-01-01T00:00:03.000Z')
    await add('grandchild', early, '2026-01-01T00:00:04.000Z')
    await agents.update(gone.id, {deletedAt: '2026-01-02T00:00:00.000Z', usage: {inputTokens: 1, outputTokens: 2, modelCalls: 3, costUsd: 0.5}}, '2026-01-02T00:00:00.000Z')
    await agents.update(late.id, {turns: 4, usage: {inputTokens: 1, outputTokens: 2, modelCalls: 3, costUsd: 0.5} as never, workspace: {path: '/w', branch: 'svc/late', baseRef: 'main', baseCommit: 'abc'}}, '2026-01-02T00:00:00.000Z')

    const children = await agents.childrenOf([one.id, two.id])
    expect(children.map((c) => c.name)).toEqual(['early', 'late'])
    expect(children).toEqual(await agents.list({parentIds: [one.id, two.id]}))
    expect(children[1]).toMatchObject({turns: 4, usage: {modelCalls: 3}, workspace: {branch: 'svc/late'}, config: {applied: {a: 1}}, parent: one, task: 'the task'})
    expect(await agents.childrenOf([])).toEqual([])
    expect(await agents.childrenOf([newId()])).toEqual([])
  })

  it('the tree route shows each node as the agent read shows it, field for field, with the totals', async () => {
    // On SQLite each node's JSON is built in SQL (agent-tree-rows.ts) and finished in teams/tree.ts:
    // every field the agent read has must come out the same, whatever the record holds.
    const {project} = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'tree-fields', localPath: checkout}})).body
    const agents = hub.store.agents
    const now = new Date().toISOString()
    const stale = new Date(Date.now() - 10 * 60_000).toISOString()
    // Children are in creation order: each agent a second after the one before.
    let made = 0
    const add = async (name: string, parent: {id: string; name: string} | null, extra: Record<string, unknown> = {}) => {
      const id = newId()
      const at = new Date(Date.now() - 60_000 + made++ * 1000).toISOString()
      await agents.insert({id, name, projectId: project.id, brokerId: null, phase: 'stopped', activity: null, detail: `detail "of" ${name}\n`, harnessConfig: 'shell', template: null, task: `task of ${name} \u2028 é`, role: 'baseline', runtime: null, runtimeRef: 'ref', config: {}, error: null, createdBy: {kind: 'user', id: 'dev-user'}, createdAt: at, updatedAt: at, parent, ...extra})
      return {id, name}
    }
    const usage = {inputTokens: 10, outputTokens: 20, cacheReadTokens: 3, modelCalls: 4, costUsd: 0.1, sessions: {s1: {inputTokens: 10, outputTokens: 20, modelCalls: 4, costUsd: 0.1, model: 'm', costFrom: 'harness' as const}}}
    const root = await add('root', null, {limits: {maxTurns: 50, maxModelCalls: null, maxDurationSeconds: 3600, maxCostUsd: 2.5, maxChildren: 4, maxDepth: 3}, config: {applied: {defaultMaxTurns: {value: 50, from: 'request'}}}})
    // A task past the answer's first 64 KiB of buffer (teams/tree.ts grows it), not all ASCII.
    const withAll = await add('all', root, {task: `${'é'.repeat(40_000)} long`, limits: {maxTurns: 10, maxModelCalls: 5, maxDurationSeconds: null, maxCostUsd: 0.75, maxChildren: 2, maxDepth: 1}, group: 'g', checkCommand: 'true', config: {applied: {model: {value: 'x', from: 'hub'}}, other: [1, 2]}})
    await agents.update(withAll.id, {workspace: {path: '/w/all', branch: 'svc/all', baseRef: 'svc/root', baseCommit: 'abc'}, usage, turns: 3, image: 'img', sandbox: 'bubblewrap', check: {status: 'failed', exitCode: 1, output: 'out\n"x"'}, brokerId: null, runtime: 'local', error: 'it broke', phase: 'stopped', activity: 'completed'}, now)
    // Limits derived from the applied settings (an agent made before budgets), and an activity a stop drops.
    const legacy = await add('legacy', root, {config: {applied: {defaultMaxTurns: {value: 7, from: 'project'}, defaultMaxModelCalls: {value: 9, from: 'hub'}, defaultMaxDuration: {value: '2m', from: 'hub'}}}})
    await agents.update(legacy.id, {activity: 'idle', turns: 2, usage: {inputTokens: 1, outputTokens: 1, modelCalls: 1, costUsd: 0.05}}, now)
    // Running and not heard from for 10 minutes: offline, derived at the read.
    const quiet = await add('quiet', withAll)
    await agents.update(quiet.id, {phase: 'running', activity: 'thinking', lastHeartbeatAt: stale}, now)
    const gone = await add('gone', withAll)
    await agents.update(gone.id, {deletedAt: now}, now)

    const t = await hub.request('GET', `/api/v1/agents/${root.id}/tree`)
    expect(t.status).toBe(200)
    const seen: string[] = []
    const check = async (node: any) => {
      const {agent} = (await hub.request('GET', `/api/v1/agents/${node.agent.id}`)).body
      delete agent.mergedAt
      delete agent.pushedAt
      expect(node.agent).toStrictEqual(agent)
      seen.push(node.agent.name)
      for (const c of node.children) await check(c)
    }
    await check(t.body.tree)
    expect(seen).toEqual(['root', 'all', 'quiet', 'legacy'])
    const byName = new Map<string, any>()
    const index = (n: any) => (byName.set(n.agent.name, n.agent), n.children.forEach(index))
    index(t.body.tree)
    expect(byName.get('quiet')).toMatchObject({phase: 'running', activity: 'offline', parent: {id: withAll.id, name: 'all'}})
    expect(byName.get('legacy')).toMatchObject({activity: null, limits: {maxTurns: 7, maxModelCalls: 9, maxDurationSeconds: 120, maxCostUsd: null}})
    expect(byName.get('all').task).toBe(`${'é'.repeat(40_000)} long`)
    expect(byName.get('all')).toMatchObject({activity: 'completed', group: 'g', usage: {sessions: {s1: {model: 'm'}}}, check: {status: 'failed'}})
    expect(t.body.totals).toEqual({agents: 4, turns: 5, modelCalls: 5, costUsd: 0.15})
  })
})
