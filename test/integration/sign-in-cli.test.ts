import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {pkcePair, startSignInHub, type SignInHub} from '../helpers/sign-in-hub.js'

// Nothing listens here: the browser stops before it, as the CLI's loopback would receive it.
const LOOPBACK = 'http://127.0.0.1:9/callback'
const atLoopback = (u: URL) => u.origin === 'http://127.0.0.1:9'

describeEachDialect('CLI sign-in: loopback code and device flow', (dialect) => {
  let h: SignInHub
  beforeAll(async () => {
    h = await startSignInHub(dialect)
  })
  afterAll(() => h?.dispose())

  const loginUrl = (q: Record<string, string>) => `${h.url}/api/v1/auth/login?${new URLSearchParams(q)}`

  /** Plays the browser to the loopback; returns the query the CLI would receive. */
  async function toLoopback(login: string, challenge: string, opts: {deny?: boolean} = {}) {
    const browser = h.browser({login, ...opts})
    const page = await browser.open(loginUrl({cli_redirect: LOOPBACK, cli_state: 'state-1234', cli_challenge: challenge}), {stopAt: atLoopback})
    expect(page.status).toBe(0)
    return Object.fromEntries(page.url.searchParams)
  }

  it('hands a one-time code to the loopback, redeemed with the verifier for a session', async () => {
    const {verifier, challenge} = pkcePair()
    const q = await toLoopback('alice', challenge)
    expect(q).toEqual({code: expect.any(String), state: 'state-1234'})
    const res = await h.hub.request('POST', '/api/v1/auth/cli/token', {token: null, body: {code: q.code, verifier}})
    expect(res.status).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.body).toEqual({token: expect.stringMatching(/^svc_ses_/), expiresAt: expect.any(String), user: {id: expect.any(String), email: 'alice@example.com', displayName: 'Alice Example', systemAdmin: false}})
    const me = await h.hub.request('GET', '/api/v1/auth/me', {token: res.body.token})
    expect(me.body).toMatchObject({credentialKind: 'session', principal: {email: 'alice@example.com'}})

    const replay = await h.hub.request('POST', '/api/v1/auth/cli/token', {token: null, body: {code: q.code, verifier}})
    expect(replay.status).toBe(400)
    expect(replay.body.error.code).toBe('login_expired')
  })

  it('burns the code on a wrong verifier', async () => {
    const {verifier, challenge} = pkcePair()
    const q = await toLoopback('alice', challenge)
    const wrong = await h.hub.request('POST', '/api/v1/auth/cli/token', {token: null, body: {code: q.code, verifier: pkcePair().verifier}})
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.code).toBe('invalid_verifier')
    const right = await h.hub.request('POST', '/api/v1/auth/cli/token', {token: null, body: {code: q.code, verifier}})
    expect(right.body.error.code).toBe('login_expired')
  })

  it('relays a refusal to the loopback so the CLI stops waiting', async () => {
    const q = await toLoopback('alice', pkcePair().challenge, {deny: true})
    expect(q).toMatchObject({error: 'access_denied', state: 'state-1234', error_description: expect.stringContaining('declined')})
    const unverified = await toLoopback('mallory', pkcePair().challenge)
    expect(unverified).toMatchObject({error: 'forbidden', state: 'state-1234'})
  })

  it.each([
    [{cli_redirect: 'https://127.0.0.1:9/cb', cli_state: 'state-1234'}, 'querystring.cli_redirect'],
    [{cli_redirect: 'http://evil.example:9/cb', cli_state: 'state-1234'}, 'querystring.cli_redirect'],
    [{cli_redirect: 'http://127.0.0.1/cb', cli_state: 'state-1234'}, 'querystring.cli_redirect'],
    [{cli_redirect: 'http://user@127.0.0.1:9/cb', cli_state: 'state-1234'}, 'querystring.cli_redirect'],
    [{cli_redirect: LOOPBACK, cli_state: 'x'}, 'querystring.cli_state'],
    [{cli_redirect: LOOPBACK, cli_state: 'state-1234', cli_challenge: 'short'}, 'querystring.cli_challenge'],
    [{cli_redirect: LOOPBACK}, 'querystring.cli_state'],
  ])('refuses CLI parameters %j', async (q, field) => {
    const params: Record<string, string> = {cli_challenge: pkcePair().challenge, ...q}
    if (!('cli_state' in q)) delete params.cli_state
    const res = await h.hub.request('GET', loginUrl(params).slice(h.url.length), {token: null})
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('validation_error')
    expect(res.body.error.details.fields.map((f: {path: string}) => f.path)).toContain(field)
  })

  it('refuses a malformed code exchange body', async () => {
    const res = await h.hub.request('POST', '/api/v1/auth/cli/token', {token: null, body: {code: 'x', verifier: 'too-short'}})
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('validation_error')
  })

  it('device flow: pending until approved in a browser, then a session, then spent', async () => {
    const start = await h.hub.request('POST', '/api/v1/auth/device', {token: null, body: {}})
    expect(start.status).toBe(200)
    const d = start.body
    expect(d).toEqual({
      deviceCode: expect.any(String),
      userCode: expect.any(String),
      verificationUri: `${h.provider.issuer}/device`,
      verificationUriComplete: expect.stringContaining('user_code='),
      interval: 5,
      expiresIn: 600,
    })
    const pending = await h.hub.request('POST', '/api/v1/auth/device/token', {token: null, body: {deviceCode: d.deviceCode}})
    expect(pending.status).toBe(428)
    expect(pending.body.error).toMatchObject({code: 'authorization_pending', details: {interval: 5}})

    const page = await h.browser({login: 'alice'}).open(d.verificationUriComplete)
    expect(page.body).toContain('Sign-in Success')

    const done = await h.hub.request('POST', '/api/v1/auth/device/token', {token: null, body: {deviceCode: d.deviceCode}})
    expect(done.status).toBe(200)
    expect(done.body.user.email).toBe('alice@example.com')
    expect((await h.hub.request('GET', '/api/v1/auth/me', {token: done.body.token})).body.credentialKind).toBe('session')

    const again = await h.hub.request('POST', '/api/v1/auth/device/token', {token: null, body: {deviceCode: d.deviceCode}})
    expect(again.status).toBe(400)
    expect(again.body.error.code).toBe('login_expired')
  })

  it('device flow: the provider\'s device code never reaches the client', async () => {
    const {body: d} = await h.hub.request('POST', '/api/v1/auth/device', {token: null, body: {}})
    const {hashSecret} = await import('../../src/domain/shared/secrets.js')
    const flow = await h.hub.store.loginFlows.get<{deviceCode: string}>(hashSecret(d.deviceCode), 'device')
    expect(flow!.data.deviceCode).not.toBe(d.deviceCode)
  })

  it('device flow: declined in the browser answers access_denied', async () => {
    const {body: d} = await h.hub.request('POST', '/api/v1/auth/device', {token: null, body: {}})
    await h.browser({login: 'alice', deny: true}).open(d.verificationUriComplete)
    const res = await h.hub.request('POST', '/api/v1/auth/device/token', {token: null, body: {deviceCode: d.deviceCode}})
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe('access_denied')
  })

  it('device flow: an unknown handle is login_expired', async () => {
    const res = await h.hub.request('POST', '/api/v1/auth/device/token', {token: null, body: {deviceCode: 'not-a-handle'}})
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('login_expired')
  })
})
