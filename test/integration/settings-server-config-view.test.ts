import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {listenHub} from '../../src/main.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {tmuxAt} from '../helpers/live-hub.js'

const brokerEnv = (tmux: string) => ({PATH: process.env.PATH ?? '/usr/bin:/bin', TMUX_TMPDIR: tmux, SVC_SERVER_BROKER_PORT: '0', DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock'})

/**
 * What GET /api/v1/admin/server-config shows: the co-located broker's identity as the Hub wrote
 * it to the settings file (save rule 5, token masked), the spec's two section origins only, and
 * effective values including the coded defaults the spec names.
 */
describeEachDialect('server-config view', (dialect) => {
  let hub: TestHub | undefined
  let tmux = ''
  afterEach(async () => {
    await hub?.dispose()
    hub = undefined
    if (tmux) {
      tmuxAt(tmux, ['kill-server'])
      rmSync(tmux, {recursive: true, force: true})
      tmux = ''
    }
  })

  it('the Hub writes server.broker.broker_id and broker_token to the settings file; GET shows them, the token masked; echoing them saves nothing', async () => {
    tmux = mkdtempSync(join(tmpdir(), 'svc-tmux-'))
    hub = await startTestHub(dialect, {files: {'.svc/settings.yaml': 'schema_version: "1"\n# mine\nserver:\n  log_level: info\n'}, env: brokerEnv(tmux)})
    await listenHub(hub, resolveBootstrap({port: 0}, hub.env))
    const brokerId = hub.colocated!.broker.opts.brokerId
    const secret = (hub.colocated!.broker.opts as {secret: string}).secret
    const file = readFileSync(join(hub.home, '.svc/settings.yaml'), 'utf8')
    expect(file).toContain('# mine')
    expect(file).toContain(`broker_id: ${brokerId}`)
    expect(file).toContain(`broker_token: ${secret}`)
    const got = (await hub.request('GET', '/api/v1/admin/server-config')).body
    expect(got.server.broker).toMatchObject({broker_id: brokerId, broker_token: '********'})
    expect(JSON.stringify(got)).not.toContain(secret)
    const echo = await hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {broker: {broker_id: brokerId, broker_token: '********'}}}})
    expect(echo.status, JSON.stringify(echo.body)).toBe(200)
    expect(echo.body.file_keys).toEqual([])
    const change = await hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {broker: {broker_token: 'other'}}}})
    expect(change.status).toBe(422)
    expect(change.body.error.code).toBe('hub_owned_keys_rejected')
    expect(readFileSync(join(hub.home, '.svc/settings.yaml'), 'utf8')).toBe(file)
  })

  it('a section with no row reports origin seeded (never a third value); every origin is seeded or managed', async () => {
    hub = await startTestHub(dialect)
    const got = (await hub.request('GET', '/api/v1/admin/server-config')).body
    expect(got.sections.profiling).toMatchObject({origin: 'seeded', revision: 0})
    for (const [name, meta] of Object.entries(got.sections as Record<string, {origin: string}>)) expect(['seeded', 'managed'], name).toContain(meta.origin)
    expect((await hub.request('DELETE', '/api/v1/admin/server-config/sections/hub')).status).toBe(200)
    const after = (await hub.request('GET', '/api/v1/admin/server-config')).body
    expect(after.sections.hub).toMatchObject({origin: 'seeded', revision: 0})
  })

  it('effective values include the coded defaults the spec names; echoing them writes nothing', async () => {
    hub = await startTestHub(dialect)
    const got = (await hub.request('GET', '/api/v1/admin/server-config')).body
    expect(got.quotas?.enforce_broker_quotas).toBe(true)
    expect(got.agent_secrets?.user_scope_only).toBe(false)
    expect(got.default_agent_role).toBe('full')
    const echo = await hub.request('PUT', '/api/v1/admin/server-config', {body: {quotas: got.quotas, agent_secrets: got.agent_secrets, revisions: {quotas: got.sections.quotas.revision}}})
    expect(echo.status, JSON.stringify(echo.body)).toBe(200)
    expect(echo.body.applied).toEqual([])
    // A saved value still wins over the default.
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {quotas: {enforce_broker_quotas: false}}})).status).toBe(200)
    expect((await hub.request('GET', '/api/v1/admin/server-config')).body.quotas.enforce_broker_quotas).toBe(false)
  })
})
