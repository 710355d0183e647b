import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

describeEachDialect('health and the error envelope', (dialect) => {
  let hub: TestHub
  beforeAll(async () => {
    hub = await startTestHub(dialect)
  })
  afterAll(() => hub?.dispose())

  it('answers /healthz and /readyz without a credential, with a request ID', async () => {
    const h = await hub.request('GET', '/healthz', {token: null})
    expect(h.status).toBe(200)
    expect(h.body).toEqual({status: 'ok'})
    expect(h.headers['x-request-id']).toMatch(/^req_[0-9a-f]{16}$/)
    const r = await hub.request('GET', '/readyz', {token: null})
    expect(r.status).toBe(200)
    expect(r.body).toEqual({status: 'ready'})
  })

  it('answers an unknown route with 404 not_found in the envelope', async () => {
    const res = await hub.request('GET', '/api/v1/nothing-here')
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('not_found')
    expect(res.body.error.requestId).toBe(res.headers['x-request-id'])
  })

  it('refuses a request without a credential with 401 unauthorized', async () => {
    const res = await hub.request('GET', '/api/v1/projects', {token: null})
    expect(res.status).toBe(401)
    expect(res.body.error).toMatchObject({code: 'unauthorized'})
  })

  it('readyz answers 503 not_ready once the database is gone', async () => {
    const other = await startTestHub(dialect)
    await other.store.close()
    const res = await other.request('GET', '/readyz', {token: null})
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('not_ready')
    await other.app.close()
  })
})
