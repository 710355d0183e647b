import {chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, tmuxAt, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {createHubDb, type HubDb} from '../helpers/restart-hub.js'

/**
 * The default runtime is chosen at the first start and kept: a container engine that starts
 * answering afterwards (stand-in `docker` and `podman` first on PATH, so this machine's own
 * engines never decide) changes nothing for existing agents or for the default.
 */
describeEachDialect('runtime fixed per agent, across a Hub restart with an engine installed', (dialect) => {
  let work: string
  let db: HubDb
  let hub: LiveHub | undefined
  let env: Record<string, string>

  const engine = (answers: boolean) => {
    for (const cli of ['docker', 'podman']) {
      writeFileSync(join(work, 'bin', cli), answers ? '#!/bin/sh\necho 27.0\n' : '#!/bin/sh\necho "Cannot connect" >&2\nexit 1\n')
      chmodSync(join(work, 'bin', cli), 0o755)
    }
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'svc-rt-fixed-'))
    for (const d of ['bin', 'home', 'tmux']) mkdirSync(join(work, d))
    db = await createHubDb(dialect)
    env = {
      HOME: join(work, 'home'),
      TMUX_TMPDIR: join(work, 'tmux'),
      PATH: `${join(work, 'bin')}:${process.env.PATH}`,
      SVC_SERVER_DATABASE_DRIVER: db.driver,
      SVC_SERVER_DATABASE_URL: db.url,
      // No setting: the first start detects, and later starts read what it stored.
      SVC_SERVER_BROKER_RUNTIME: '',
      DOCKER_HOST: '',
      CONTAINER_HOST: '',
    }
  })

  afterAll(async () => {
    await hub?.dispose()
    tmuxAt(join(work, 'tmux'), ['kill-server'])
    await db?.drop()
    rmSync(work, {recursive: true, force: true})
  })

  it('first start without an engine: local, stored; an agent runs there, sandboxed', async () => {
    engine(false)
    hub = await startLiveHub('sqlite', {env})
    expect(JSON.parse(readFileSync(join(work, 'home', '.svc', 'broker', 'runtime.json'), 'utf8'))).toMatchObject({runtime: 'local', how: 'detected'})
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'before', projectId: 'default', harnessConfig: 'shell'}})
    expect(r.body.agent).toMatchObject({phase: 'running', runtime: 'local', sandbox: 'bubblewrap', image: null})
  })

  it('restarted with an engine answering: the default and the existing agent stay on local; keys still reach it', async () => {
    await hub!.dispose()
    hub = undefined
    engine(true)
    hub = await startLiveHub('sqlite', {env})
    const broker = (await hub.request('GET', `/api/v1/brokers/${hub.brokerId}`)).body.broker
    expect(broker.runtimes[0]).toBe('local')
    const before = (await hub.request('GET', '/api/v1/projects/default/agents/before')).body.agent
    expect(before).toMatchObject({phase: 'running', runtime: 'local'})
    const keys = await hub.request('POST', `/api/v1/agents/${before.id}/keys`, {body: {keys: 'echo still-on-local\r'}})
    expect(keys.status).toBe(200)
    await waitFor(() => /^still-on-local$/m.test(tmuxAt(join(work, 'tmux'), ['capture-pane', '-p', '-t', `=svc-${before.id}:`]).stdout), 10_000, 'the keys ran in the agent')
    const after = await hub.request('POST', '/api/v1/agents', {body: {name: 'after', projectId: 'default', harnessConfig: 'shell'}})
    expect(after.body.agent).toMatchObject({phase: 'running', runtime: 'local'})
  })
})
