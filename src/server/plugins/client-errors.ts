import {STATUS_CODES} from 'node:http'
import type {Duplex} from 'node:stream'
import type {Logger} from 'pino'
import {AppError, type ErrorEnvelope} from '../../api/app-error.js'
import {newRequestId} from '../request-id.js'

type ClientError = Error & {code?: string; rawPacket?: unknown}

/**
 * What Node's HTTP parser refused before Fastify saw a request (a timeout, headers too large, a
 * method it does not know, bytes that are not HTTP), as a catalogue error. A header overflow
 * whose request line never ended is a URL that is too long (414), not too many headers (431).
 */
export function clientErrorOf(err: ClientError): AppError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'the request did not arrive in time; the connection is closed')
    case 'HPE_HEADER_OVERFLOW': {
      const raw = err.rawPacket
      const lineEnded = Buffer.isBuffer(raw) ? raw.includes('\n') : true
      return lineEnded ? new AppError('headers_too_large', 'the request headers are too large') : new AppError('uri_too_long', 'the request URL is too long')
    }
    case 'HPE_INVALID_METHOD':
      return new AppError('method_not_allowed', 'unknown HTTP method')
    default:
      return new AppError('invalid_request', 'malformed HTTP request')
  }
}

/**
 * The HTTP server's `clientError` handler: answers with the envelope and an `x-request-id`, as
 * every other error does, then closes the connection (the parser cannot go on after an error).
 */
export function clientErrorHandler(logger: Logger) {
  return (err: ClientError, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const known = clientErrorOf(err)
    const id = newRequestId()
    logger.info({requestId: id, code: known.code, cause: err.code}, 'client error')
    if (!socket.writable) return void socket.destroy()
    const body: ErrorEnvelope = {error: {code: known.code, message: known.message, requestId: id}}
    const text = JSON.stringify(body)
    socket.end(
      `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
        `x-request-id: ${id}\r\nconnection: close\r\n\r\n${text}`,
    )
    // A peer that never reads must not keep the socket open.
    setTimeout(() => socket.destroy(), 2000).unref()
  }
}
