import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {listenHub} from '../../src/main.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {agentProcessEnv, tmuxAt, waitFor} from '../helpers/live-hub.js'

const SETTINGS = `schema_version: "1"
active_profile: desk
runtimes:
  tmuxed: {type: local, env: {RUNTIME_SRC: file}}
profiles:
  desk: {runtime: tmuxed, env: {PROFILE_SRC: file}}
`

/** A co-located broker on its own tmux server; no container engine answers, so no probe waits. */
const brokerEnv = (tmux: string) => ({PATH: process.env.PATH ?? '/usr/bin:/bin', TMUX_TMPDIR: tmux, SVC_SERVER_BROKER_PORT: '0', DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock'})

/** The co-located broker takes `runtimes` and `profiles` from the database sections, and follows saves. */
describeEachDialect('settings: the co-located broker\'s runtimes and profiles', (dialect) => {
  let hub: TestHub | undefined
  let tmux = ''
  afterEach(async () => {
    await hub?.dispose()
    tmuxAt(tmux, ['kill-server'])
    rmSync(tmux, {recursive: true, force: true})
  })

  it('starts on the saved (database) profile, not the settings file\'s; a later save reaches the next agent without a restart', async () => {
    tmux = mkdtempSync(join(tmpdir(), 'svc-tmux-'))
    hub = await startTestHub(dialect, {
      files: {'.svc/settings.yaml': SETTINGS},
      env: brokerEnv(tmux),
    })
    const put = (body: unknown) => hub!.request('PUT', '/api/v1/admin/server-config', {body})
    // Saved before the broker starts: only the database holds this value (Layer-1 never goes to the file).
    expect((await put({profiles: {desk: {runtime: 'tmuxed', env: {PROFILE_SRC: 'db'}}}})).status).toBe(200)
    await listenHub(hub, resolveBootstrap({port: 0}, hub.env))
    const broker = hub.colocated!.broker
    const envOf = async (name: string) => {
      const r = await hub!.request('POST', '/api/v1/agents', {body: {name, projectId: 'default'}})
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      expect(r.body.agent).toMatchObject({phase: 'running', runtime: 'tmuxed', brokerId: broker.opts.brokerId})
      const id: string = r.body.agent.id
      const env = await waitFor(() => {
        const e = agentProcessEnv(tmux, id)
        return e.SVC_AGENT_ID ? e : null
      }, 10_000, `the environment of ${name}`)
      return {id, env}
    }
    const first = await envOf('first')
    expect(first.env).toMatchObject({PROFILE_SRC: 'db', RUNTIME_SRC: 'file'})

    const before = broker.runtime
    expect((await put({runtimes: {tmuxed: {type: 'local', env: {RUNTIME_SRC: 'db'}}}})).status).toBe(200)
    // The switch happens on the settings change; wait for it rather than for a time.
    await waitFor(() => broker.runtime !== before, 10_000, 'the broker to switch runtime')
    expect((await envOf('second')).env).toMatchObject({PROFILE_SRC: 'db', RUNTIME_SRC: 'db'})
    // The first agent kept running through the switch, and is still stopped through its runtime.
    expect(tmuxAt(tmux, ['has-session', '-t', `=svc-${first.id}`]).code).toBe(0)
    expect((await hub.request('POST', `/api/v1/agents/${first.id}/stop`, {body: {}})).body.agent.phase).toBe('stopped')
    expect(tmuxAt(tmux, ['has-session', '-t', `=svc-${first.id}`]).code).not.toBe(0)

    // A save unrelated to runtimes does not rebuild the runtime.
    const current = broker.runtime
    expect((await put({quotas: {max_agents_per_project: 9}})).status).toBe(200)
    expect(broker.runtime).toBe(current)

    // An unusable selection is not applied: switches run in order, so once the next good save
    // is applied the bad one was seen and skipped, and agents still start.
    expect((await put({profiles: {desk: {runtime: 'nowhere'}}})).status).toBe(200)
    expect((await put({profiles: {desk: {runtime: 'tmuxed', env: {PROFILE_SRC: 'db3'}}}})).status).toBe(200)
    await waitFor(() => broker.runtime !== current, 10_000, 'the broker to switch runtime')
    expect((await envOf('third')).env).toMatchObject({PROFILE_SRC: 'db3', RUNTIME_SRC: 'db'})
  })

  it('an unusable saved selection does not stop the Hub from starting: the broker uses the default runtime', async () => {
    tmux = mkdtempSync(join(tmpdir(), 'svc-tmux-'))
    hub = await startTestHub(dialect, {files: {'.svc/settings.yaml': SETTINGS}, env: brokerEnv(tmux)})
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {profiles: {desk: {runtime: 'nowhere'}}}})).status).toBe(200)
    await listenHub(hub, resolveBootstrap({port: 0}, hub.env))
    // No container engine answers in this environment: the default is the local runtime.
    expect(hub.colocated!.broker.runtime.type).toBe('local')
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'fallback', projectId: 'default'}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    expect(r.body.agent.phase).toBe('running')
  })
})
