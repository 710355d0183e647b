import type {FastifyError, FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'
import type {ErrorObject} from 'ajv'
import {AppError, type ErrorEnvelope} from '../../api/app-error.js'
import type {ErrorCode} from '../../api/error-codes.js'
import {fieldsOf} from './validation.js'
import {sendNotFoundPage, wantsHtmlNotFound} from '../web/not-found-page.js'
import {isDatabaseUnreachable} from '../../store/db-errors.js'

export function sendError(reply: FastifyReply, request: FastifyRequest, err: AppError): FastifyReply {
  const body: ErrorEnvelope = {error: {code: err.code, message: err.message, ...(err.details && {details: err.details}), requestId: request.id}}
  // Set here too: framework errors (a bad URL, a parameter too long) skip the onRequest hook.
  return reply.header('x-request-id', request.id).code(err.status).type('application/json; charset=utf-8').send(body)
}

/** Maps Fastify's own errors (parsing, limits, validation) into the catalogue. */
function fromFastify(err: FastifyError): AppError | null {
  if (err.validation) {
    const fields = fieldsOf(err.validation as ErrorObject[], err.validationContext ?? 'body')
    const summary = fields.map((f) => `${f.path} ${f.message}`).join('; ')
    return new AppError('validation_error', `invalid request: ${summary}`, {fields})
  }
  switch (err.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'the request body is empty; send a JSON object')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_request', 'the request body is not valid JSON')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is too large')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'unsupported content type; send application/json')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'the request body does not match its Content-Length')
    case 'FST_ERR_BAD_URL':
      return new AppError('invalid_request', 'the request URL is malformed (bad percent-encoding)')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('uri_too_long', 'a path parameter of the request URL is too long')
  }
  if (err instanceof SyntaxError || err.statusCode === 400) return new AppError('invalid_request', 'malformed request: ' + err.message)
  // Any other client error Fastify raises keeps its status under the nearest catalogue code.
  const byStatus: Record<number, ErrorCode> = {404: 'not_found', 405: 'method_not_allowed', 408: 'request_timeout', 413: 'payload_too_large', 414: 'uri_too_long', 415: 'unsupported_media_type', 431: 'headers_too_large'}
  const code = err.statusCode ? byStatus[err.statusCode] : undefined
  if (code) return new AppError(code, err.message)
  return null
}

/** Codes that mean something broke: logged as errors with their stack. */
const UNEXPECTED = new Set<ErrorCode>(['internal_error', 'settings_file_write_failed'])

/** Fastify's own errors before routing (bad URL, parameter too long) as the envelope. */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const known = fromFastify(err) ?? new AppError('invalid_request', 'malformed request')
  request.log.info({code: known.code}, known.message)
  sendError(reply, request, known)
}

/**
 * One error handler writes every error as the envelope of CONTRACT.md. Unexpected errors are
 * logged with the request ID and answered as a bare 500: internals never leave the Hub.
 */
export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const known = err instanceof AppError ? err : fromFastify(err)
    if (known) {
      // A 5xx the Hub raises on purpose (sign-in not configured, no broker, maintenance) is an
      // answer, not a fault: one info line with its code, no stack. Only failures stay errors.
      if (UNEXPECTED.has(known.code)) request.log.error({err}, known.message)
      else if (known.status >= 500) request.log.info({code: known.code, status: known.status}, known.message)
      return sendError(reply, request, known)
    }
    if (isDatabaseUnreachable(err)) {
      // No connection could be opened: nothing of this request's statement ran. The same answer
      // as /readyz, which load balancers and replica failover take as "try again or elsewhere".
      request.log.warn({err}, 'the database does not answer')
      return sendError(reply, request, new AppError('not_ready', 'the database does not answer; try again shortly'))
    }
    request.log.error({err}, 'unhandled error')
    return sendError(reply, request, new AppError('internal_error', 'internal error; the Hub logged it under this request ID'))
  })
  app.setNotFoundHandler((request, reply) => {
    // A browser opening a page the Hub does not have gets a page; API paths keep the envelope.
    if (wantsHtmlNotFound(request)) return sendNotFoundPage(request, reply)
    // details.reason lets a client tell "this Hub has no such route" (older Hub) from "no such resource".
    sendError(reply, request, new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`, {reason: 'no_route'}))
  })
}
