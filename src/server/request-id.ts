import {randomBytes} from 'node:crypto'
import type {IncomingMessage} from 'node:http'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/
const requestPrefix = randomBytes(4).toString('hex')
let requestCounter = 0

/** A new request ID: a random per-process prefix and a counter, unique without a random draw per request. */
export function newRequestId(): string {
  requestCounter = (requestCounter + 1) >>> 0
  return `req_${requestPrefix}${requestCounter.toString(16).padStart(8, '0')}`
}

/** A well-formed incoming X-Request-Id is kept so a client can correlate; otherwise a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : newRequestId()
}
