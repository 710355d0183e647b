import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {BIN, cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {startOidcProvider, type TestProvider} from '../helpers/oidc-provider.js'
import {TestBrowser} from '../helpers/test-browser.js'

const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url))
const BROWSER_SCRIPT = fileURLToPath(new URL('../helpers/browser-cli.ts', import.meta.url))

/** Spawns `svc <args>` and resolves with the first stderr match of `re`, and the exit later. */
function spawnCli(args: string[], env: NodeJS.ProcessEnv, re: RegExp) {
  const child = spawn(process.execPath, [BIN, ...args], {env, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  const matched = new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d
      const m = re.exec(stderr)
      if (m) resolve(m)
    })
    child.on('exit', () => reject(new Error(`exited before ${re}: ${stderr}`)))
  })
  const exited = new Promise<{code: number | null; stdout: string; json: any; stderr: string}>((resolve) =>
    child.on('close', (code) => {
      let json: unknown
      try {
        json = JSON.parse(stdout)
      } catch {
        json = undefined
      }
      resolve({code, stdout, json, stderr})
    }),
  )
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  child.on('close', () => clearTimeout(timer))
  return {matched, exited}
}

// Each sign-in spawns the CLI, a scripted browser under tsx and several more CLI calls: under a
// loaded CI one test took over the default 30 s. A liveness bound, not a target.
describe('svc auth login / logout against a hosted Hub and a real OpenID provider', {timeout: 120_000}, () => {
  const serverHome = mkdtempSync(join(tmpdir(), 'svc-e2e-hub-'))
  const work = mkdtempSync(join(tmpdir(), 'svc-e2e-cli-'))
  const browserLog = join(work, 'browser.log')
  let provider: TestProvider
  let server: RunningServer
  let n = 0
  /** A fresh CLI home each time, so no session carries over between tests. */
  const cli = (extra: Record<string, string> = {}) => {
    const home = join(work, `home-${++n}`)
    mkdirSync(home)
    return {home, env: cliEnv(home, {SVC_HUB_ENDPOINT: server.url, SVC_TEST_BROWSER_LOG: browserLog, DISPLAY: '', WAYLAND_DISPLAY: '', ...extra})}
  }
  const viaScript = {SVC_BROWSER: `${TSX} ${BROWSER_SCRIPT}`}

  beforeAll(async () => {
    const providerPort = await freePort()
    const clientSecret = 'e2e-secret-0123456789'
    mkdirSync(join(serverHome, '.svc'))
    writeFileSync(
      join(serverHome, '.svc', 'settings.yaml'),
      [
        'schema_version: "1"',
        'server:',
        '  hub:',
        '    host: 127.0.0.1',
        '  database:',
        '    driver: sqlite',
        `    url: ${join(serverHome, 'e2e-hub.db')}`,
        '  auth:',
        '    oidc:',
        `      issuer_url: http://127.0.0.1:${providerPort}`,
        '      client_id: svc-hub',
        `      client_secret: ${clientSecret}`,
        '',
      ].join('\n'),
    )
    server = await startServerProcess(['--hosted'], cliEnv(serverHome))
    // The Hub discovers its provider on first use, so the provider can start once the Hub's port is known.
    provider = await startOidcProvider({redirectUris: [`${server.url}/api/v1/auth/callback`], port: providerPort, clientSecret})
  })
  afterAll(async () => {
    await server?.stop()
    await provider?.close()
  })

  it('a hosted Hub has no dev credential: whoami before login is not_signed_in', async () => {
    const r = await runCli(['whoami', '--json'], {env: cli().env})
    expect(r.code).toBe(1)
    expect(r.json.error.code).toBe('not_signed_in')
  })

  it('signs in through the browser and the loopback; whoami shows a session; logout revokes it', async () => {
    const {home, env} = cli({...viaScript, SVC_TEST_BROWSER_LOGIN: 'alice'})
    const r = await runCli(['auth', 'login', '--json'], {env, timeoutMs: 30_000})
    expect(r.code, r.stderr + readLog()).toBe(0)
    expect(r.json).toMatchObject({hub: server.url, method: 'browser', user: {email: 'alice@example.com', displayName: 'Alice Example', systemAdmin: false}, expiresAt: expect.any(String)})
    expect(r.stderr).toContain('/api/v1/auth/login?cli_redirect=http%3A%2F%2F127.0.0.1%3A')

    const file = join(home, '.svc', 'credentials.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const token = JSON.parse(readFileSync(file, 'utf8')).sessions[server.url].token as string
    expect(token).toMatch(/^svc_ses_/)

    const who = await runCli(['whoami', '--json'], {env})
    expect(who.code).toBe(0)
    expect(who.json).toMatchObject({principal: {kind: 'user', email: 'alice@example.com'}, credentialKind: 'session', systemAdmin: false})
    const human = await runCli(['whoami'], {env})
    expect(human.stdout).toContain('Credential:')
    expect(human.stdout).toContain('session')

    const out = await runCli(['auth', 'logout', '--json'], {env})
    expect(out.code).toBe(0)
    expect(out.json).toEqual({hub: server.url, signedOut: true, revoked: true})
    await expect(requestJson('GET', `${server.url}/api/v1/auth/me`, {token})).rejects.toMatchObject({code: 'unauthorized'})
    expect((await runCli(['whoami', '--json'], {env})).json.error.code).toBe('not_signed_in')
    const again = await runCli(['auth', 'logout'], {env})
    expect(again.code).toBe(0)
    expect(again.stdout).toBe(`Not signed in to ${server.url}; nothing to do.\n`)
  })

  it('signs in with --device, the browser approving the code', async () => {
    const {env} = cli({...viaScript, SVC_TEST_BROWSER_LOGIN: 'bob'})
    const r = await runCli(['auth', 'login', '--device', '--json'], {env, timeoutMs: 30_000})
    expect(r.code, r.stderr + readLog()).toBe(0)
    expect(r.json).toMatchObject({method: 'device', user: {email: 'bob@other.test'}})
    expect(r.stderr).toMatch(/enter the code:\s+[A-Z]{4}-[A-Z]{4}/)
    const who = await runCli(['whoami', '--json'], {env})
    expect(who.json).toMatchObject({credentialKind: 'session', principal: {email: 'bob@other.test'}})
  })

  it('with --no-browser prints the address; a browser opened by hand finishes the sign-in (human output)', async () => {
    const {env} = cli()
    const run = spawnCli(['auth', 'login', '--no-browser'], env, /^\s+(http:\/\/\S+)$/m)
    const [, url] = await run.matched
    await new TestBrowser({login: 'carol'}).open(url)
    const done = await run.exited
    expect(done.code, done.stderr).toBe(0)
    expect(done.stderr).toContain('Open this address in a browser on this machine')
    expect(done.stdout).toMatch(/^Signed in to http:\/\/127\.0\.0\.1:\d+\.\nUser: +Carol Example <carol@example\.com>\nSystem admin: +no\nSession expires: +\S+\n$/)
    const who = await runCli(['whoami', '--json'], {env})
    expect(who.json).toMatchObject({credentialKind: 'session', principal: {email: 'carol@example.com'}})
  })

  it('falls back to the device flow when no browser can be opened here', async () => {
    const {env} = cli()
    const run = spawnCli(['auth', 'login', '--json'], env, /open (\S+) on any device and enter the code:\s+(\S+)/)
    const [, uri, code] = await run.matched
    await new TestBrowser({login: 'alice'}).open(`${uri}?user_code=${code}`)
    const done = await run.exited
    expect(done.code, done.stderr).toBe(0)
    expect(done.json).toMatchObject({method: 'device', user: {email: 'alice@example.com'}})
  })

  it('reports a sign-in declined in the browser', async () => {
    const {env} = cli({...viaScript, SVC_TEST_BROWSER_DENY: '1'})
    const r = await runCli(['auth', 'login', '--json'], {env, timeoutMs: 30_000})
    expect(r.code).toBe(1)
    expect(r.json.error).toMatchObject({code: 'access_denied'})
  })

  it('refuses a Hub without OpenID configuration: oidc_unconfigured', async () => {
    const other = await startServerProcess(['--hosted'], cliEnv(mkdtempSync(join(tmpdir(), 'svc-e2e-')), {SVC_SERVER_HUB_HOST: '127.0.0.1'}))
    try {
      const r = await runCli(['auth', 'login', '--json', '--hub', other.url], {env: cli(viaScript).env})
      expect(r.code).toBe(1)
      expect(r.json.error.code).toBe('oidc_unconfigured')
    } finally {
      await other.stop()
    }
  })

  it('answers hub_unreachable (exit 3) when no Hub listens', async () => {
    const port = await freePort()
    const r = await runCli(['auth', 'login', '--json', '--hub', `http://127.0.0.1:${port}`], {env: cli(viaScript).env})
    expect(r.code).toBe(3)
    expect(r.json.error.code).toBe('hub_unreachable')
  })

  function readLog(): string {
    try {
      return '\nbrowser log:\n' + readFileSync(browserLog, 'utf8')
    } catch {
      return ''
    }
  }
})
