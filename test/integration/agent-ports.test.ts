import {execFileSync, spawn} from 'node:child_process'
import {copyFileSync, mkdtempSync, rmSync} from 'node:fs'
import {get as httpGet, type IncomingMessage} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import WebSocket from 'ws'
import {agentLogs, typedInto} from '../helpers/agent-shell.js'
import {BIN, cliEnv} from '../helpers/cli.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {launchChromium, screenshot, signInPage} from '../helpers/web-browser.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

/** The text a WebSocket through the Hub answers to `text`. */
function wsEcho(url: string, headers: Record<string, string>, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, {headers})
    ws.once('open', () => ws.send(text))
    ws.once('message', (data) => {
      resolve(data.toString())
      ws.close()
    })
    ws.once('error', reject)
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)))
  })
}

/**
 * Issue 29, ports and previews on the local runtime (bubblewrap, the agent's own network): each
 * agent gets its own block of ports; a server a shell agent starts is listed (found in its
 * network namespace) and fetched through the Hub, HTTP and WebSocket; what it does not listen
 * on, and what the host listens on, is 404; another agent's token gets nothing of it, from
 * inside that agent.
 */
describe('agent ports and previews through the Hub (local runtime, isolated network)', () => {
  let hub: LiveHub
  let checkout: string
  let projectId: string
  const auth = () => ({authorization: `Bearer ${hub.devToken}`})

  beforeAll(async () => {
    const settings = `schema_version: "1"\nauto_expose_ports:\n  enabled: true\nruntimes:\n  local:\n    type: local\n    network: isolated\n`
    hub = await startLiveHub('sqlite', {files: {'.svc/settings.yaml': settings}})
    checkout = mkdtempSync(join(tmpdir(), 'svc-ports-checkout-'))
    git(checkout, 'init', '-q', '-b', 'main')
    copyFileSync(join(__dirname, '../fixtures/ports/agent-server.cjs'), join(checkout, 'server.cjs'))
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'ports', localPath: checkout}})).body.project.id
  })
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  }, 120_000)

  const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig: 'shell'}})).body.agent
  const logs = (id: string) => agentLogs(hub, id)
  const typed = (id: string, line: string, marker: string) => typedInto(hub, id, line, marker)

  it('gives each agent its own ports, lists what it listens on and forwards HTTP and WebSocket to it', async () => {
    const web = await create('web')
    const other = await create('other')
    expect(web).toMatchObject({phase: 'running', runtime: 'local', sandbox: 'bubblewrap'})
    for (const a of [web, other]) await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${a.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')

    // Ports: a block of 10 each, PORT its first, never the same block twice.
    const block = async (id: string) => (await typed(id, 'echo "block=$PORT:$SVC_PORTS"', 'block')).split(':')
    const [webPort, webPorts] = await block(web.id)
    const [otherPort, otherPorts] = await block(other.id)
    expect(webPorts).toBe(`${webPort}-${Number(webPort) + 9}`)
    expect(otherPorts).toBe(`${otherPort}-${Number(otherPort) + 9}`)
    expect(Math.abs(Number(webPort) - Number(otherPort))).toBeGreaterThanOrEqual(10)
    const port = Number(webPort)

    // A server on 127.0.0.1:$PORT and one on 0.0.0.0:$PORT+1, started by the agent.
    expect(await typed(web.id, `(setsid node server.cjs $PORT 127.0.0.1 web >/tmp/s1.log 2>&1 &); (setsid node server.cjs $((PORT+1)) 0.0.0.0 web2 >/tmp/s2.log 2>&1 &); sleep 1; echo "started=$?"`, 'started')).toBe('0')
    const listed = await waitFor(async () => {
      const r = await fetch(`${hub.url}/api/v1/agents/${web.id}/ports`, {headers: auth()})
      const ports = r.status === 200 ? (await r.json()).ports : []
      return ports.length >= 2 ? ports : undefined
    }, 30_000, 'ports listed')
    // Only the agent's servers: not the forwarder of the Hub's endpoint inside its namespace.
    expect(listed).toEqual([
      {port, url: `${hub.url}/agents/${web.id}/ports/${port}/`},
      {port: port + 1, url: `${hub.url}/agents/${web.id}/ports/${port + 1}/`},
    ])

    // HTTP through the Hub: path and query kept, the body streamed, credentials not passed on.
    const got = await fetch(`${hub.url}/agents/${web.id}/ports/${port}/hello?x=1`, {headers: {...auth(), cookie: 'svc_session=secret; app=1'}})
    expect(got.status, await got.clone().text()).toBe(200)
    expect(got.headers.get('content-security-policy')).toContain('sandbox')
    const page = await got.text()
    expect(page).toContain('hello from web')
    expect(page).toContain('GET /hello?x=1')
    expect(page).toContain('auth=- cookie=app=1')
    const posted = await (await fetch(`${hub.url}/agents/${web.id}/ports/${port + 1}/form`, {method: 'POST', headers: auth(), body: 'a=1&b=2'})).text()
    expect(posted).toContain('hello from web2')
    expect(posted).toContain('a=1&b=2')
    const big = await fetch(`${hub.url}/agents/${web.id}/ports/${port}/big`, {headers: auth()})
    expect((await big.arrayBuffer()).byteLength).toBe(10 * 1024 * 1024)
    // A redirect and cookies of the agent's server stay under the preview; it cannot set the Hub's.
    const moved = await fetch(`${hub.url}/agents/${web.id}/ports/${port}/redirect`, {headers: auth(), redirect: 'manual'})
    expect(moved.headers.get('location')).toBe(`/agents/${web.id}/ports/${port}/hello`)
    expect(moved.headers.getSetCookie()).toEqual([`app=1; Path=/agents/${web.id}/ports/${port}/`])
    // Written by hand by the agent's server: nothing for the Hub's whole origin, no nameless
    // cookie; a flood of interim heads is refused (502) within the head limit, not read on.
    const wide = await fetch(`${hub.url}/agents/${web.id}/ports/${port}/origin-wide`, {headers: auth()})
    expect([wide.status, await wide.text(), wide.headers.get('nel'), wide.headers.get('report-to'), wide.headers.get('clear-site-data'), wide.headers.getSetCookie()]).toEqual([200, 'ok', null, null, null, []])
    expect((await fetch(`${hub.url}/agents/${web.id}/ports/${port}/interim-flood`, {headers: auth()})).status).toBe(502)

    // WebSocket through the Hub.
    expect(await wsEcho(`${hub.url.replace('http', 'ws')}/agents/${web.id}/ports/${port}/ws`, auth(), 'ping')).toBe('echo:web:ping')

    // What it does not listen on is 404, the host's own listeners (PostgreSQL, the Hub) included.
    const hubPort = Number(new URL(hub.url).port)
    for (const p of [port + 2, 5432, hubPort]) {
      const r = await fetch(`${hub.url}/agents/${web.id}/ports/${p}/`, {headers: auth()})
      expect(r.status, `port ${p}`).toBe(404)
      expect((await r.json()).error.code).toBe('not_found')
    }
    // Without a credential: 401 for a client, sign-in for a browser.
    expect((await fetch(`${hub.url}/agents/${web.id}/ports/${port}/hello`)).status).toBe(401)
    // (node:http: fetch sends its own Sec-Fetch-Mode, never a browser's `navigate`.)
    const browser = await new Promise<IncomingMessage>((resolve, reject) => httpGet(`${hub.url}/agents/${web.id}/ports/${port}/hello`, {headers: {accept: 'text/html', 'sec-fetch-mode': 'navigate'}}, resolve).on('error', reject))
    browser.resume()
    expect(browser.statusCode).toBe(303)
    expect(browser.headers.location).toBe(`/?return_to=${encodeURIComponent(`/agents/${web.id}/ports/${port}/hello`)}`)

    // Attack from inside the other agent, with its own token: the first agent's ports are not
    // its to see or reach (404), through the API or the preview; its own are (the control).
    const curl = (path: string) => `curl -s -o /dev/null -w %{http_code} -H "Authorization: Bearer $SVC_AUTH_TOKEN" "$SVC_HUB_ENDPOINT${path}"`
    expect(await typed(other.id, `echo "own=$(${curl(`/api/v1/agents/${other.id}/ports`)})"`, 'own')).toBe('200')
    expect(await typed(other.id, `echo "list=$(${curl(`/api/v1/agents/${web.id}/ports`)})"`, 'list')).toBe('404')
    expect(await typed(other.id, `echo "preview=$(${curl(`/agents/${web.id}/ports/${port}/hello`)})"`, 'preview')).toBe('404')
    expect(await typed(other.id, `echo "connect=$(${curl(`/api/v1/agents/${web.id}/ports/${port}/connect`)})"`, 'connect')).toBe('404')
    expect(await typed(other.id, `echo "direct=$(curl -s -o /dev/null -w %{http_code} --max-time 5 http://127.0.0.1:${port}/hello)"`, 'direct')).toBe('000')
    // A path that tries to leave the agent's server stays on it.
    const escape = await (await fetch(`${hub.url}/agents/${web.id}/ports/${port}/..%2F..%2Fapi%2Fv1%2Fagents`, {headers: auth()})).text()
    expect(escape).toContain('hello from web')
    expect(escape).toContain('GET /..%2F..%2Fapi%2Fv1%2Fagents')
    expect(await logs(other.id)).not.toContain('hello from web')

    // A signed-in browser: the agent page links the port; the preview opens (on a preview link,
    // so the page's own requests are authorized), and the page cannot use the Hub's API.
    const chromium = await launchChromium()
    try {
      const page = await chromium.newPage()
      await signInPage(page, hub.url, hub.devToken, `/#/agents/${web.id}`)
      const link = page.locator(`#agent-ports a[href="${hub.url}/agents/${web.id}/ports/${port}/"]`)
      await link.waitFor({timeout: 30_000})
      await page.goto(`${hub.url}/agents/${web.id}/ports/${port}/page`)
      await page.locator('h1', {hasText: 'hello from web'}).waitFor({timeout: 30_000})
      expect(page.url()).toMatch(new RegExp(`/agents/${web.id}/ports/${port}/~[\\w-]+\\.[\\w-]+/page$`))
      await screenshot(page, 'agent-port-preview')
      // Its own requests (relative: under the preview link) are answered; the Hub's API is not
      // reachable with the person's session from the sandboxed page.
      expect(await page.evaluate(() => fetch('sub', {method: 'POST', headers: {'content-type': 'application/json'}, body: '{"n":1}'}).then((r) => r.text()))).toContain('POST')
      expect(await page.evaluate(() => fetch('/api/v1/agents', {credentials: 'include'}).then((r) => r.status, () => 'blocked'))).not.toBe(200)
    } finally {
      await chromium.close()
    }

    // svc agent forward: a local port through the Hub (the real CLI), HTTP and WebSocket.
    const home = mkdtempSync(join(tmpdir(), 'svc-forward-home-'))
    const cli = spawn(process.execPath, [BIN, 'agent', 'forward', web.id, String(port), '--local', '0', '--json'], {env: cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_AUTH_TOKEN: hub.devToken}), stdio: ['ignore', 'pipe', 'pipe']})
    try {
      let out = ''
      cli.stdout.on('data', (d) => (out += d))
      const local = await waitFor(() => /"local":(\d+)/.exec(out)?.[1], 30_000, 'the forward listening')
      expect(await (await fetch(`http://127.0.0.1:${local}/via-forward`)).text()).toContain('GET /via-forward')
      expect(await wsEcho(`ws://127.0.0.1:${local}/ws`, {}, 'fwd')).toBe('echo:web:fwd')
    } finally {
      cli.kill('SIGINT')
      await new Promise((r) => cli.once('close', r))
      rmSync(home, {recursive: true, force: true})
    }

    // Deleting an agent releases its block: the next agent gets it.
    expect((await hub.request('DELETE', `/api/v1/agents/${web.id}`)).status).toBe(200)
    const next = await create('next')
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${next.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')
    expect((await block(next.id))[0]).toBe(webPort)
  }, 240_000)
})
