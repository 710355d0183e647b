import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {newId} from '../../src/domain/shared/secrets.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * The children read the tree route walks (`agents.childrenOf`, value arrays on SQLite) on both
 * databases: the same records as `list({parentIds})` (every field), live ones only, by creation.
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
})
