import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, runCli} from '../helpers/cli.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

/**
 * Issue 30 item 10: `svc agent create --runtime` picks the agent's runtime whatever the broker's
 * default, the agent records it, a restart keeps it; an unknown runtime is a clear refusal that
 * makes nothing. The Hub's co-located broker defaults to docker here, with no engine behind it.
 */
describe('svc agent create --runtime', {timeout: 180_000}, () => {
  let hub: LiveHub
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-runtime-'))
  let env: NodeJS.ProcessEnv
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 90_000})

  beforeAll(async () => {
    hub = await startLiveHub('sqlite', {env: {SVC_SERVER_BROKER_RUNTIME: 'docker'}})
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken})
  }, 90_000)
  afterAll(async () => {
    await hub?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it('the control: without --runtime the agent goes to the default (docker) and does not start here', async () => {
    const r = await svc('agent', 'create', 'on-default', '--harness', 'shell', '--json')
    expect(r.code, r.stdout + r.stderr).toBe(1)
    expect(r.json.error.code).toBe('agent_failed')
    expect(r.json.error.message).toMatch(/docker/i)
  })

  it('--runtime local runs the agent on the local runtime and records it; a restart stays there', async () => {
    const r = await svc('agent', 'create', 'on-local', '--harness', 'shell', '--runtime', 'local', '--json')
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json.agent).toMatchObject({name: 'on-local', phase: 'running', runtime: 'local'})
    const human = await svc('agent', 'get', 'on-local')
    expect(human.stdout).toMatch(/^Runtime: +local$/m)
    const restarted = await svc('agent', 'restart', 'on-local', '--json')
    expect(restarted.code, restarted.stdout + restarted.stderr).toBe(0)
    expect(restarted.json.agent).toMatchObject({phase: 'running', runtime: 'local'})
  })

  it('an unknown runtime is refused with runtime_unavailable, naming it; nothing is made', async () => {
    const r = await svc('agent', 'create', 'nowhere', '--harness', 'shell', '--runtime', 'nope', '--json')
    expect(r.code).toBe(1)
    expect(r.json.error.code).toBe('runtime_unavailable')
    expect(r.json.error.message).toContain('"nope"')
    const list = await svc('agent', 'list', '--json')
    expect(list.json.agents.map((a: {name: string}) => a.name)).not.toContain('nowhere')
    // Refused, not failed: the same name is free for a create that works.: the same name is free for a create that works.
    expect((await svc('agent', 'create', 'nowhere', '--harness', 'shell', '--runtime', 'local', '--json')).code).toBe(0)
  })
})
