import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import net from 'node:net'
import {networkInterfaces, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

/** Whether a TCP connection from the host to host:port is accepted (the controls). */
function reachable(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect({host, port})
    c.once('connect', () => {
      c.destroy()
      resolve(true)
    })
    c.once('error', () => resolve(false))
  })
}

function serve(text: string, host: string): Promise<Server> {
  const s = createServer((_req, res) => res.end(text))
  return new Promise((r) => s.listen(0, host, () => r(s)))
}
const portOf = (s: Server) => (s.address() as net.AddressInfo).port

/** A non-loopback IPv4 address of this host (to reach a settings-listed host through the proxy), if any. */
const hostAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address

/**
 * Attack (issue 26, "no loopback trust"): a hostile agent on the local runtime tries every
 * listener on the host's loopback. Its network is its own: it reaches the Hub, the model server
 * its harness config names and the hosts `egress_allow` lists (through its proxy), and nothing
 * else: not PostgreSQL, not the broker's local API, not another listener, not another agent's
 * port. It is not root inside. Each target is shown listening from the host first.
 */
describe('attack: an agent reaches only its allowed network', () => {
  let hub: LiveHub
  let checkout: string
  let projectId: string
  let model: Server
  let bystander: Server
  let listed: Server | undefined

  beforeAll(async () => {
    model = await serve('model-ok', '127.0.0.1')
    bystander = await serve('bystander-secret', '127.0.0.1')
    if (hostAddress) listed = await serve('listed-ok', hostAddress)
    const settings =
      `schema_version: "1"\n` +
      `runtimes:\n  local:\n    type: local\n    network: isolated\n    egress_allow: [${listed ? `"${hostAddress}:${portOf(listed)}"` : ''}]\n` +
      `harness_configs:\n  shell:\n    env:\n      ANTHROPIC_BASE_URL: http://127.0.0.1:${portOf(model)}\n`
    hub = await startLiveHub('sqlite', {files: {'.svc/settings.yaml': settings}})
    checkout = mkdtempSync(join(tmpdir(), 'svc-net-checkout-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# net\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'net', localPath: checkout}})).body.project.id
  })
  afterAll(async () => {
    await hub?.dispose()
    for (const s of [model, bystander, listed]) s?.close()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig: 'shell'}})).body.agent
  const logs = async (id: string) => String((await hub.request('GET', `/api/v1/agents/${id}/logs`)).body)
  /** Types a line whose output carries `<marker>=<value>` (the marker split in the typed text) and returns the value. */
  async function typed(id: string, line: string, marker: string): Promise<string> {
    const sent = line.replace(`${marker}=`, `${marker[0]}""${marker.slice(1)}=`)
    expect((await hub.request('POST', `/api/v1/agents/${id}/keys`, {body: {keys: `${sent}\r`}})).status).toBe(200)
    const re = new RegExp(`${marker}=(\\S*)`)
    return (await waitFor(async () => re.exec(await logs(id))?.[1], 30_000, marker)) as string
  }
  /** bash's /dev/tcp: `0` when a TCP connection to 127.0.0.1:port is accepted inside the agent. */
  const tcp = (id: string, port: number, marker: string) => typed(id, `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; echo "${marker}=$?"`, marker)

  it('reaches the Hub and its model server; not PostgreSQL, the broker API, another listener or another agent; not root', async () => {
    const brokerPort = Number(new URL(hub.colocated!.localUrl!).port)
    const other = await create('other')
    const me = await create('me')
    expect(me).toMatchObject({phase: 'running', runtime: 'local', sandbox: 'bubblewrap'})
    for (const a of [me, other]) await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${a.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')

    // Controls: every target listens, seen from the host.
    expect(await reachable(5432), 'PostgreSQL on 127.0.0.1:5432').toBe(true)
    expect(await reachable(brokerPort), "the broker's local API").toBe(true)
    expect(await reachable(portOf(bystander))).toBe(true)
    // Another agent's listener, seen from that agent itself.
    expect(await typed(other.id, `(setsid socat TCP-LISTEN:7777,bind=127.0.0.1,reuseaddr,fork SYSTEM:'echo other-agent-secret' >/dev/null 2>&1 &); sleep 1; (exec 3<>/dev/tcp/127.0.0.1/7777) 2>/dev/null; echo "self-rc=$?"`, 'self-rc')).toBe('0')

    // Allowed: the Hub (its endpoint unchanged) and the model server the harness config names.
    expect(await typed(me.id, 'echo "hub-url=$SVC_HUB_ENDPOINT"', 'hub-url')).toBe(hub.url)
    expect(await typed(me.id, 'echo "hub=$(curl -s -o /dev/null -w %{http_code} "$SVC_HUB_ENDPOINT/healthz")"', 'hub')).toBe('200')
    expect(await typed(me.id, 'echo "model=$(curl -s "$ANTHROPIC_BASE_URL/v1/x")"', 'model')).toBe('model-ok')

    // Refused: everything else on the host's loopback, and the other agent's port.
    expect(await tcp(me.id, 5432, 'pg-rc')).not.toBe('0')
    expect(await tcp(me.id, brokerPort, 'broker-rc')).not.toBe('0')
    expect(await tcp(me.id, portOf(bystander), 'bystander-rc')).not.toBe('0')
    expect(await tcp(me.id, 7777, 'other-rc')).not.toBe('0')
    expect(await typed(me.id, `echo "dev-session=$(curl -s -o /dev/null -w %{http_code} -X POST http://127.0.0.1:${brokerPort}/ --max-time 5)"`, 'dev-session')).toBe('000')

    // Not root inside (the broker runs as root here: a user namespace maps it to 1000).
    const uid = await typed(me.id, 'echo "uid=$(id -u)"', 'uid')
    expect(uid).not.toBe('0')
    if (process.getuid?.() === 0) expect(uid).toBe('1000')
    // What it writes belongs to the broker's user on the host (the namespace maps 1000 to it).
    expect(await typed(me.id, 'echo mine > owned.txt; echo "wrote=$?"', 'wrote')).toBe('0')
    expect(statSync(join(me.workspace.path, 'owned.txt')).uid).toBe(process.getuid!())

    if (listed && hostAddress) {
      // A settings-listed host is reached through the sandbox's proxy, and only that host.
      expect(await reachable(portOf(listed), hostAddress)).toBe(true)
      expect(await typed(me.id, `echo "listed=$(curl -s --max-time 10 http://${hostAddress}:${portOf(listed)}/)"`, 'listed')).toBe('listed-ok')
      expect(await typed(me.id, `echo "direct=$(curl -s -o /dev/null -w %{http_code} --noproxy '*' --max-time 5 http://${hostAddress}:${portOf(listed)}/)"`, 'direct')).toBe('000')
      expect(await typed(me.id, `echo "via-proxy=$(curl -s -o /dev/null -w %{http_code} --noproxy '' -x "$HTTPS_PROXY" --max-time 5 http://127.0.0.1:${portOf(bystander)}/)"`, 'via-proxy')).toBe('403')
      expect(await typed(me.id, `echo "tunnel=$(curl -s -o /dev/null -w %{http_connect} --noproxy '' -p -x "$HTTPS_PROXY" --max-time 5 http://127.0.0.1:5432/)"`, 'tunnel')).toBe('403')
    }
    const all = await logs(me.id)
    expect(all).not.toContain('bystander-secret')
    expect(all).not.toContain('other-agent-secret')
  }, 180_000)
})
