import {createServer, type Server} from 'node:http'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {AppError} from '../api/app-error.js'
import {requestJson} from './http.js'

/** A loopback server that answers each path with a canned error envelope. */
describe('requestJson error mapping', () => {
  let server: Server
  let base: string
  const answers: Record<string, {status: number; body: unknown}> = {
    '/no-route': {status: 404, body: {error: {code: 'not_found', message: 'no route GET /no-route', details: {reason: 'no_route'}, requestId: 'r1'}}},
    '/old-hub': {status: 404, body: {error: {code: 'not_found', message: 'no route GET /old-hub', requestId: 'r2'}}},
    '/missing': {status: 404, body: {error: {code: 'not_found', message: 'agent not found', requestId: 'r3'}}},
    '/conflict': {status: 409, body: {error: {code: 'agent_not_running', message: 'stopped', details: {x: 1}, requestId: 'r4'}}},
  }
  beforeAll(async () => {
    server = createServer((req, res) => {
      const a = answers[req.url ?? ''] ?? {status: 500, body: 'plain text'}
      res.writeHead(a.status, {'content-type': typeof a.body === 'string' ? 'text/plain' : 'application/json'})
      res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    base = `http://127.0.0.1:${(server.address() as {port: number}).port}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  const fail = (path: string) => requestJson('GET', base + path).then(() => null, (e: AppError) => e)

  it('a route the Hub does not have is hub_unsupported, with or without details.reason', async () => {
    for (const path of ['/no-route', '/old-hub']) {
      const e = await fail(path)
      expect(e).toBeInstanceOf(AppError)
      expect(e!.code, path).toBe('hub_unsupported')
    }
  })

  it('a missing resource stays not_found; other envelopes keep code, details and request ID', async () => {
    expect((await fail('/missing'))!.code).toBe('not_found')
    const c = await fail('/conflict')
    expect([c!.code, c!.status, c!.details]).toEqual(['agent_not_running', 409, {x: 1, requestId: 'r4'}])
  })

  it('a body that is not an envelope is internal_error naming the status', async () => {
    const e = await fail('/other')
    expect([e!.code, e!.status]).toEqual(['internal_error', 500])
  })

  it('no server at all is hub_unreachable', async () => {
    const e = await requestJson('GET', 'http://127.0.0.1:1/x').then(() => null, (err: AppError) => err)
    expect(e!.code).toBe('hub_unreachable')
  })
})
