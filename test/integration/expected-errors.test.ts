import {Writable} from 'node:stream'
import pino from 'pino'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * Issue 22 item 13: a 5xx the Hub answers on purpose (sign-in not configured) is logged at info
 * with its code and no stack; the sign-in providers route says "none" with 200 {oidc: null}.
 */
describeEachDialect('expected 5xx answers', (dialect) => {
  let hub: TestHub
  const lines: Array<Record<string, any>> = []
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _e, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l))
        done()
      },
    })
    hub = await startTestHub(dialect, {logger: pino({level: 'info'}, sink)})
  })
  afterAll(() => hub?.dispose())

  it('GET /api/v1/auth/providers is 200 {oidc: null} when sign-in is not configured', async () => {
    const res = await hub.request('GET', '/api/v1/auth/providers', {token: null})
    expect(res.status).toBe(200)
    expect(res.body).toEqual({oidc: null})
  })

  it('oidc_unconfigured is answered 503 and logged at info with its code, without a stack', async () => {
    const res = await hub.request('GET', '/api/v1/auth/login', {token: null})
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('oidc_unconfigured')
    const mine = lines.filter((l) => l.reqId === res.headers['x-request-id'])
    const line = mine.find((l) => l.code === 'oidc_unconfigured')
    expect(line).toMatchObject({level: 30, code: 'oidc_unconfigured', status: 503})
    expect(mine.every((l) => l.level < 50)).toBe(true)
    expect(JSON.stringify(mine)).not.toMatch(/"stack"|"err"/)
  })
})
