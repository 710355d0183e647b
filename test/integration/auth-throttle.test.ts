import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * Issue 22 item 16: repeated refused credentials from one client address are throttled: after
 * N 401s in the window every credential from that address is 429 quota_exceeded (a valid one
 * too, so guessing learns nothing) until the window ends; other addresses are not affected.
 */
describeEachDialect('refused credentials are throttled per client address', (dialect) => {
  let hub: TestHub
  beforeAll(async () => {
    hub = await startTestHub(dialect, {limits: {authFailuresPerWindow: 3, authFailureWindowMs: 60_000}})
  })
  afterAll(() => hub?.dispose())

  const me = (token: string, ip: string) => hub.app.inject({method: 'GET', url: '/api/v1/auth/me', remoteAddress: ip, headers: {authorization: `Bearer ${token}`}})

  it('three 401s, then 429 quota_exceeded for any credential from that address; another address still works', async () => {
    for (let i = 0; i < 3; i++) expect((await me(`svc_guess_${i}`, '10.0.0.7')).statusCode).toBe(401)
    const blocked = await me('svc_guess_9', '10.0.0.7')
    expect(blocked.statusCode).toBe(429)
    expect(blocked.json().error).toMatchObject({code: 'quota_exceeded', details: {retryAfterSeconds: expect.any(Number), limit: 3}, requestId: blocked.headers['x-request-id']})
    expect((await me(hub.devToken, '10.0.0.7')).statusCode).toBe(429)
    expect((await me(hub.devToken, '10.0.0.8')).statusCode).toBe(200)
    // Successful requests do not count.
    for (let i = 0; i < 5; i++) expect((await me(hub.devToken, '10.0.0.9')).statusCode).toBe(200)
    expect((await me('svc_guess_x', '10.0.0.9')).statusCode).toBe(401)
  })
})
