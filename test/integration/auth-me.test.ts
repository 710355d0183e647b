import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'

const FORGED_DEV = 'svc_dev_' + '0'.repeat(64)

describeEachDialect('GET /api/v1/auth/me and the dev credential', (dialect) => {
  describe('workstation Hub (dev mode on)', () => {
    let hub: TestHub
    beforeAll(async () => {
      hub = await startTestHub(dialect)
    })
    afterAll(() => hub?.dispose())

    it('the dev credential is the dev user, a system admin, credential kind dev', async () => {
      expect(hub.devToken).toMatch(/^svc_dev_[0-9a-f]{64}$/)
      const res = await hub.request('GET', '/api/v1/auth/me')
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        principal: {kind: 'user', id: 'dev-user', email: 'dev@localhost', displayName: 'Developer'},
        credentialKind: 'dev',
        systemAdmin: true,
      })
    })

    it('a session is credential kind session', async () => {
      const u = await createUser(hub, {email: 'sess@example.test', displayName: 'Sess'})
      const res = await hub.request('GET', '/api/v1/auth/me', {token: u.token})
      expect(res.body).toEqual({principal: {kind: 'user', id: u.user.id, email: 'sess@example.test', displayName: 'Sess'}, credentialKind: 'session', systemAdmin: false})
    })

    it.each([
      ['a wrong dev credential', {authorization: `Bearer ${FORGED_DEV}`}],
      ['a dev credential with one character changed', null],
      ['an unknown secret', {authorization: 'Bearer nonsense'}],
      ['an unknown session', {authorization: `Bearer svc_ses_${'a'.repeat(64)}`}],
      ['an unknown access token', {authorization: `Bearer svc_pat_${'a'.repeat(64)}`}],
      ['a non-Bearer header', {authorization: 'Basic dXNlcjpwYXNz'}],
      ['no credential', {}],
    ])('%s is refused with 401 unauthorized', async (_name, headers) => {
      const h = headers ?? {authorization: `Bearer ${hub.devToken.slice(0, -1)}${hub.devToken.endsWith('0') ? '1' : '0'}`}
      const res = await hub.request('GET', '/api/v1/auth/me', {token: null, headers: h})
      expect(res.status).toBe(401)
      expect(res.body.error.code).toBe('unauthorized')
    })
  })

  describe('hosted Hub without dev mode', () => {
    let hub: TestHub
    beforeAll(async () => {
      hub = await startTestHub(dialect, {flags: {hosted: true}})
    })
    afterAll(() => hub?.dispose())

    it('writes no dev credential and refuses any dev token', async () => {
      expect(hub.config.devMode).toBe(false)
      expect(hub.config.devToken).toBeNull()
      expect(existsSync(join(hub.home, '.svc', 'dev-token'))).toBe(false)
      const res = await hub.request('GET', '/api/v1/auth/me', {token: FORGED_DEV})
      expect([res.status, res.body.error.code]).toEqual([401, 'unauthorized'])
    })

    it('sessions still work', async () => {
      const u = await createUser(hub)
      expect((await hub.request('GET', '/api/v1/auth/me', {token: u.token})).body.credentialKind).toBe('session')
    })
  })

  describe('hosted Hub with server.auth.dev_mode on', () => {
    let hub: TestHub
    beforeAll(async () => {
      hub = await startTestHub(dialect, {flags: {hosted: true}, env: {SVC_SERVER_AUTH_DEVMODE: 'true'}})
    })
    afterAll(() => hub?.dispose())

    it('writes and accepts the dev credential', async () => {
      expect(hub.devToken).toMatch(/^svc_dev_/)
      const res = await hub.request('GET', '/api/v1/auth/me')
      expect([res.status, res.body.credentialKind]).toEqual([200, 'dev'])
    })
  })
})
