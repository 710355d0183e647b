import {mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, tmuxAt, type LiveHub} from '../helpers/live-hub.js'
import {createHubDb, type HubDb} from '../helpers/restart-hub.js'

/**
 * Issue 30 item 9: an agent started again after a Hub restart showed no activity at all (the
 * dispatch wrote `activity: null`, and a resumed harness reports nothing until it is spoken to).
 * Its activity is `idle` (or what the harness reports) from the moment it runs, never blank.
 * Real Hubs, one after the other on the same database, with a co-located broker on tmux.
 */
describeEachDialect('activity after a Hub restart and a start', (dialect) => {
  let work: string
  let db: HubDb
  let hub: LiveHub | undefined
  let env: Record<string, string>
  const get = async (id: string) => (await hub!.request('GET', `/api/v1/agents/${id}`)).body.agent

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'svc-restart-activity-'))
    for (const d of ['home', 'tmux']) mkdirSync(join(work, d))
    db = await createHubDb(dialect)
    env = {HOME: join(work, 'home'), TMUX_TMPDIR: join(work, 'tmux'), SVC_SERVER_DATABASE_DRIVER: db.driver, SVC_SERVER_DATABASE_URL: db.url}
  })

  afterAll(async () => {
    await hub?.dispose()
    tmuxAt(join(work, 'tmux'), ['kill-server'])
    await db?.drop()
    rmSync(work, {recursive: true, force: true})
  })

  it('a new agent with no hooks to report is idle, not blank', async () => {
    hub = await startLiveHub('sqlite', {env})
    const made = await hub.request('POST', '/api/v1/agents', {body: {name: 'keeper', projectId: 'default', harnessConfig: 'shell'}})
    expect(made.status).toBe(201)
    expect(made.body.agent).toMatchObject({phase: 'running', activity: 'idle'})
    expect(await get(made.body.agent.id)).toMatchObject({phase: 'running', activity: 'idle'})
  })

  it('after a Hub restart, stop and start: idle again (the start resumes, no task is given)', async () => {
    const id = (await hub!.request('GET', '/api/v1/projects/default/agents/keeper')).body.agent.id
    await hub!.dispose()
    hub = undefined
    hub = await startLiveHub('sqlite', {env})
    expect((await hub.request('POST', `/api/v1/agents/${id}/stop`, {body: {}})).body.agent).toMatchObject({phase: 'stopped', activity: null})
    const started = await hub.request('POST', `/api/v1/agents/${id}/start`, {body: {}})
    expect(started.status).toBe(200)
    expect(started.body.agent).toMatchObject({phase: 'running', activity: 'idle'})
    expect(await get(id)).toMatchObject({phase: 'running', activity: 'idle'})
    // restart (stop then start in one call) likewise
    const restarted = await hub.request('POST', `/api/v1/agents/${id}/restart`, {body: {}})
    expect(restarted.body.agent).toMatchObject({phase: 'running', activity: 'idle'})
  })
})
