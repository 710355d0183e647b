import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {movableClock, startSignInHub, type SignInHub} from '../helpers/sign-in-hub.js'

const isCallback = (u: URL) => u.pathname === '/api/v1/auth/callback'

describeEachDialect('web sign-in with OpenID Connect', (dialect) => {
  let h: SignInHub
  const clock = movableClock()
  beforeAll(async () => {
    h = await startSignInHub(dialect, {clock})
  })
  afterAll(() => h?.dispose())

  it('describes the provider', async () => {
    const res = await h.hub.request('GET', '/api/v1/auth/providers', {token: null})
    expect(res.status).toBe(200)
    expect(res.body).toEqual({oidc: {issuer: h.provider.issuer, deviceFlow: true}})
  })

  it('signs in through the provider, sets the session cookie and lands on return_to', async () => {
    const {token, browser, last} = await h.signIn('alice', {returnTo: '/projects?tab=mine'})
    expect(token).toMatch(/^svc_ses_[0-9a-f]{64}$/)
    expect(last.url.pathname + last.url.search).toBe('/projects?tab=mine')
    const callback = browser.history.find((s) => s.url.includes('/api/v1/auth/callback'))!
    expect(callback).toMatchObject({status: 302, location: '/projects?tab=mine'})
    const cookie = callback.setCookie!.find((c) => c.startsWith('svc_session='))!
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Lax/)
    expect(cookie).not.toMatch(/Secure/)
    expect(cookie).toMatch(/Path=\//)

    const me = await h.hub.request('GET', '/api/v1/auth/me', {token})
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({principal: {kind: 'user', email: 'alice@example.com', displayName: 'Alice Example'}, credentialKind: 'session', systemAdmin: false})
    // The cookie itself authenticates same-origin reads.
    const byCookie = await h.hub.request('GET', '/api/v1/auth/me', {token: null, headers: {cookie: `svc_session=${token}`}})
    expect(byCookie.body.credentialKind).toBe('session')
  })

  it('finds the same user on the next sign-in', async () => {
    const a = await h.signIn('alice')
    const b = await h.signIn('alice')
    const [ma, mb] = await Promise.all([a, b].map((x) => h.hub.request('GET', '/api/v1/auth/me', {token: x.token})))
    expect(ma.body.principal.id).toBe(mb.body.principal.id)
    expect(a.last.url.pathname).toBe('/')
  })

  it.each([
    ['https://evil.example/'],
    ['//evil.example/path'],
    ['/\\evil.example'],
    ['javascript:alert(1)'],
    ['projects'],
    ['/ok\r\nSet-Cookie: x=y'],
  ])('refuses return_to %j (open redirect) before contacting the provider', async (returnTo) => {
    const res = await h.hub.request('GET', `/api/v1/auth/login?return_to=${encodeURIComponent(returnTo)}`, {token: null})
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({code: 'validation_error', details: {fields: [{path: 'querystring.return_to'}]}})
    expect(res.headers.location).toBeUndefined()
  })

  it('offers no HEAD on the login and callback routes (a prefetch must not start or spend a flow)', async () => {
    for (const url of ['/api/v1/auth/login', '/api/v1/auth/callback?state=x&code=y']) {
      expect((await h.hub.request('HEAD', url, {token: null})).status).toBe(404)
    }
  })

  it('refuses unknown login parameters', async () => {
    const res = await h.hub.request('GET', '/api/v1/auth/login?next=/x', {token: null})
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('validation_error')
  })

  it('uses a flow once: a replayed callback is refused', async () => {
    const browser = h.browser({login: 'alice'})
    const stopped = await browser.open(`${h.url}/api/v1/auth/login`, {stopAt: isCallback})
    const callbackUrl = stopped.url.toString()
    const first = await browser.open(callbackUrl, {stopAt: (u) => u.pathname === '/'})
    expect(first.status).toBe(0)
    expect(browser.cookie('127.0.0.1', 'svc_session')).toBeTruthy()
    const again = await browser.open(callbackUrl)
    expect(again.status).toBe(400)
    expect(JSON.parse(again.body).error.code).toBe('login_expired')
  })

  it('refuses a callback carried to another browser (login CSRF), and the first browser still finishes', async () => {
    const victim = h.browser()
    const attacker = h.browser({login: 'bob'})
    const stopped = await attacker.open(`${h.url}/api/v1/auth/login`, {stopAt: isCallback})
    const res = await victim.open(stopped.url.toString())
    expect(res.status).toBe(400)
    expect(JSON.parse(res.body).error.code).toBe('login_expired')
    expect(victim.cookie('127.0.0.1', 'svc_session')).toBeUndefined()
    const own = await attacker.open(stopped.url.toString(), {stopAt: (u) => u.pathname === '/'})
    expect(own.status).toBe(0)
  })

  it('refuses a flow finished after it expired (10 minutes)', async () => {
    const browser = h.browser({login: 'alice'})
    const stopped = await browser.open(`${h.url}/api/v1/auth/login`, {stopAt: isCallback})
    clock.advance(11 * 60_000)
    try {
      const res = await browser.open(stopped.url.toString())
      expect(res.status).toBe(400)
      expect(JSON.parse(res.body).error).toMatchObject({code: 'login_expired', message: expect.stringContaining('expired')})
    } finally {
      clock.advance(-11 * 60_000)
    }
  })

  it('refuses a callback with an unknown state or none', async () => {
    const unknown = await h.hub.request('GET', '/api/v1/auth/callback?code=x&state=nope', {token: null})
    expect(unknown.status).toBe(400)
    expect(unknown.body.error.code).toBe('login_expired')
    const none = await h.hub.request('GET', '/api/v1/auth/callback?code=x', {token: null})
    expect(none.status).toBe(400)
    expect(none.body.error.code).toBe('invalid_request')
  })

  it('answers access_denied when the user declines at the provider', async () => {
    const browser = h.browser({login: 'alice', deny: true})
    const res = await browser.open(`${h.url}/api/v1/auth/login`)
    expect(res.status).toBe(403)
    expect(JSON.parse(res.body).error.code).toBe('access_denied')
  })

  it('refuses an address the provider marks unverified', async () => {
    const {token, last} = await h.signIn('mallory')
    expect(token).toBeUndefined()
    expect(last.status).toBe(403)
    expect(JSON.parse(last.body).error).toMatchObject({code: 'forbidden', message: expect.stringContaining('not verified')})
  })

  it('refuses a suspended user, and the suspended user\'s sessions stop working', async () => {
    const {token} = await h.signIn('carol')
    const me = await h.hub.request('GET', '/api/v1/auth/me', {token})
    const patched = await h.hub.request('PATCH', `/api/v1/users/${me.body.principal.id}`, {body: {status: 'suspended'}})
    expect(patched.status).toBe(200)
    const again = await h.signIn('carol')
    expect(again.token).toBeUndefined()
    expect(again.last.status).toBe(403)
    expect(JSON.parse(again.last.body).error.code).toBe('user_suspended')
    expect((await h.hub.request('GET', '/api/v1/auth/me', {token})).body.error.code).toBe('user_suspended')
  })

  it('logout revokes the session and clears the cookie', async () => {
    const {token} = await h.signIn('alice')
    const out = await h.hub.request('POST', '/api/v1/auth/logout', {token})
    expect(out.status).toBe(200)
    expect(String(out.headers['set-cookie'])).toMatch(/svc_session=;/)
    const me = await h.hub.request('GET', '/api/v1/auth/me', {token})
    expect(me.status).toBe(401)
    expect(me.body.error.code).toBe('unauthorized')
  })

  it('keeps pending flows in the database, swept after expiry', async () => {
    const browser = h.browser()
    await browser.open(`${h.url}/api/v1/auth/login`, {stopAt: (u) => u.origin === h.provider.issuer})
    const state = browser.cookie('127.0.0.1', 'svc_login')!
    const {hashSecret} = await import('../../src/domain/shared/secrets.js')
    expect(await h.hub.store.loginFlows.get(hashSecret(state), 'web')).not.toBeNull()
    await h.hub.store.loginFlows.deleteExpired(new Date(Date.now() + 11 * 60_000).toISOString())
    expect(await h.hub.store.loginFlows.get(hashSecret(state), 'web')).toBeNull()
  })
})

describeEachDialect('sign-in policies', (dialect) => {
  it('makes users named in server.hub.admin_emails system admins', async () => {
    const h = await startSignInHub(dialect, {env: {SVC_SERVER_HUB_ADMINEMAILS: 'root@example.com'}})
    try {
      const root = await h.signIn('root')
      expect((await h.hub.request('GET', '/api/v1/auth/me', {token: root.token})).body).toMatchObject({credentialKind: 'session', systemAdmin: true})
      const alice = await h.signIn('alice')
      expect((await h.hub.request('GET', '/api/v1/auth/me', {token: alice.token})).body.systemAdmin).toBe(false)
    } finally {
      await h.dispose()
    }
  })

  it('limits sign-in to authorized domains with user_access_mode: domains', async () => {
    const h = await startSignInHub(dialect, {env: {SVC_SERVER_AUTH_USERACCESSMODE: 'domains', SVC_SERVER_AUTH_AUTHORIZEDDOMAINS: 'example.com'}})
    try {
      const alice = await h.signIn('alice')
      expect((await h.hub.request('GET', '/api/v1/auth/me', {token: alice.token})).body.credentialKind).toBe('session')
      const bob = await h.signIn('bob')
      expect(bob.token).toBeUndefined()
      expect(bob.last.status).toBe(403)
      expect(JSON.parse(bob.last.body).error).toMatchObject({code: 'forbidden', message: expect.stringContaining('other.test')})
    } finally {
      await h.dispose()
    }
  })

  it('answers 503 oidc_unconfigured on every sign-in route when server.auth.oidc is not set', async () => {
    const h = await startSignInHub(dialect, {oidc: false})
    try {
      const verifier = 'v'.repeat(43)
      const calls: Array<[string, string, unknown?]> = [
        ['GET', '/api/v1/auth/login'],
        ['GET', '/api/v1/auth/login?return_to=/x'],
        ['GET', '/api/v1/auth/callback?code=a&state=b'],
        ['POST', '/api/v1/auth/cli/token', {code: 'abc', verifier}],
        ['POST', '/api/v1/auth/device', {}],
        ['POST', '/api/v1/auth/device/token', {deviceCode: 'abc'}],
      ]
      for (const [method, url, body] of calls) {
        const res = await h.hub.request(method, url, {token: null, body})
        expect([url, res.status, res.body.error?.code]).toEqual([url, 503, 'oidc_unconfigured'])
      }
    } finally {
      await h.dispose()
    }
  })
})
