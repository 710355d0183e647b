import {execFileSync} from 'node:child_process'
import {copyFileSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {buildBaseImage} from '../../src/broker/images/build-base.js'
import {runCommand} from '../../src/broker/runtimes/run-command.js'
import {findExecutable} from '../../src/broker/sandbox/host.js'
import {agentLogs} from '../helpers/agent-shell.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

const podman = findExecutable('podman', process.env.PATH)
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

/**
 * Issue 29 on podman (`--network host`): the agent's ports are the host table's sockets its
 * container's processes hold. A server it starts is listed and fetched through the Hub; the
 * host's own listener (PostgreSQL on 5432) is not its port (404), though it listens on the
 * same network.
 */
describe.skipIf(!podman)('agent ports and previews on podman', () => {
  let hub: LiveHub
  let checkout: string
  let agentId = ''

  beforeAll(async () => {
    await buildBaseImage({engine: 'podman', progress: () => {}})
    hub = await startLiveHub('sqlite', {
      env: {SVC_SERVER_BROKER_RUNTIME: 'podman', CONTAINER_HOST: undefined, DOCKER_HOST: undefined} as unknown as Record<string, string>,
      files: {'.svc/settings.yaml': 'schema_version: "1"\nauto_expose_ports:\n  enabled: true\n'},
    })
    checkout = mkdtempSync(join(tmpdir(), 'svc-ports-podman-'))
    git(checkout, 'init', '-q', '-b', 'main')
    copyFileSync(join(__dirname, '../fixtures/ports/agent-server.cjs'), join(checkout, 'server.cjs'))
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
  }, 900_000)
  afterAll(async () => {
    if (agentId) await runCommand('podman', ['rm', '-f', `svc-${agentId}`]).catch(() => {})
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  }, 120_000)

  it('lists the server the agent starts and forwards to it; the host\'s listeners are not its ports', async () => {
    const projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'ports-podman', localPath: checkout}})).body.project.id
    const agent = (await hub.request('POST', '/api/v1/agents', {body: {name: 'web', projectId, harnessConfig: 'shell'}})).body.agent
    agentId = agent.id
    expect(agent, agent.error).toMatchObject({phase: 'running', runtime: 'podman'})
    // Node inside: the one the svc command mounted into the container runs (a development build).
    const start = `N=$(grep -o '/[^ "]*/node' "$(command -v svc)" | head -1); (setsid "$N" server.cjs $PORT 0.0.0.0 pod >/tmp/s.log 2>&1 &); echo "started=$?"\r`
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${agentId}/keys`, {body: {keys: start}})).status === 200, 120_000, 'keys delivered')
    const auth = {authorization: `Bearer ${hub.devToken}`}
    const ports = await waitFor(async () => {
      const r = await fetch(`${hub.url}/api/v1/agents/${agentId}/ports`, {headers: auth})
      const list = r.status === 200 ? (await r.json()).ports : []
      return list.length ? list : undefined
    }, 60_000, `the server listed (agent output: ${await agentLogs(hub, agentId)})`)
    const port = ports[0].port
    expect(ports).toEqual([{port, url: `${hub.url}/agents/${agentId}/ports/${port}/`}])
    expect(port).toBeGreaterThanOrEqual(20000)
    const page = await (await fetch(`${hub.url}/agents/${agentId}/ports/${port}/hi`, {headers: auth})).text()
    expect(page).toContain('hello from pod')
    const other = await fetch(`${hub.url}/agents/${agentId}/ports/5432/`, {headers: auth})
    expect(other.status).toBe(404)
  }, 300_000)
})
