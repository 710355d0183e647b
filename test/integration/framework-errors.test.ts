import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {rawRequest, type RawResponse} from '../helpers/raw-http.js'

/**
 * Issue 22 item 11: every error answer is the envelope with x-request-id, also the ones Fastify
 * and Node's HTTP parser produce before any route runs. Raw bytes on a real loopback socket, so
 * nothing normalises the request on the way.
 */
const REQ_ID = /^req_[0-9a-f]{16}$/

function expectEnvelope(res: RawResponse, status: number, code: string) {
  expect(res.status, res.body).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  expect(res.headers['x-request-id']).toMatch(REQ_ID)
  const body = JSON.parse(res.body)
  expect(Object.keys(body)).toEqual(['error'])
  expect(body.error).toMatchObject({code, message: expect.any(String), requestId: res.headers['x-request-id']})
  expect(body.error.message.length).toBeGreaterThan(0)
}

describe('framework and parser errors use the envelope', () => {
  let hub: TestHub
  let port: number
  beforeAll(async () => {
    hub = await startTestHub('sqlite', {limits: {headersTimeoutMs: 300, requestTimeoutMs: 300, timeoutCheckMs: 100}})
    await hub.app.listen({host: '127.0.0.1', port: 0})
    port = (hub.app.server.address() as {port: number}).port
  })
  afterAll(() => hub?.dispose())

  const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`

  it('a bad percent-encoding in the path is 400 invalid_request', async () => {
    expectEnvelope(await rawRequest(port, get('/api/v1/agents/%zz')), 400, 'invalid_request')
  })

  it('a path parameter over the length limit is 414 uri_too_long', async () => {
    expectEnvelope(await rawRequest(port, get(`/api/v1/agents/${'a'.repeat(500)}`)), 414, 'uri_too_long')
  })

  it('a request line longer than the header limit is 414 uri_too_long', async () => {
    expectEnvelope(await rawRequest(port, get(`/api/v1/agents/${'a'.repeat(100_000)}`)), 414, 'uri_too_long')
  })

  it('headers over the limit are 431 headers_too_large', async () => {
    expectEnvelope(await rawRequest(port, get('/api/v1/agents', `X-Big: ${'a'.repeat(20_000)}\r\n`)), 431, 'headers_too_large')
  })

  it('a method the parser does not know is 405 method_not_allowed; a known method with no route is 404 not_found', async () => {
    expectEnvelope(await rawRequest(port, 'FOO /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'), 405, 'method_not_allowed')
    expectEnvelope(await rawRequest(port, 'PROPFIND /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'), 404, 'not_found')
    expectEnvelope(await rawRequest(port, 'PATCH /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'), 404, 'not_found')
  })

  it('a malformed request (a header line without a colon, a bad version) is 400 invalid_request', async () => {
    expectEnvelope(await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n'), 400, 'invalid_request')
    expectEnvelope(await rawRequest(port, 'GET /healthz HTTP/7.3\r\nHost: 127.0.0.1\r\n\r\n'), 400, 'invalid_request')
  })

  it('headers that never finish are 408 request_timeout', async () => {
    expectEnvelope(await rawRequest(port, 'GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n'), 408, 'request_timeout')
  })

  it('a body that never finishes is 408 request_timeout', async () => {
    const res = await rawRequest(port, `POST /api/v1/projects/register HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${hub.devToken}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`)
    expectEnvelope(res, 408, 'request_timeout')
  })
})
