import http from 'node:http'
import {createRequire} from 'node:module'
import {AppError} from '../api/app-error.js'
import type {ErrorCode} from '../api/error-codes.js'

// node:https (with TLS) is loaded on the first https URL only: most CLI calls go to a local Hub
// over http, and loading it costs a noticeable part of a short command's start-up.
const requireBuiltin = createRequire(import.meta.url)
export const httpsModule = (): typeof import('node:https') => requireBuiltin('node:https')

export interface HttpResponse<T = unknown> {
  status: number
  headers: http.IncomingHttpHeaders
  body: T
}

export interface RequestOptions {
  token?: string | null
  body?: unknown
  headers?: Record<string, string>
  timeoutMs?: number
}

/** Appended to every `hub_unreachable` message: how to point the CLI at another Hub. */
export const UNREACHABLE_HINT = 'is it running? Start one with `svc server start`, or point the CLI at another Hub with --hub <url> or SVC_HUB_ENDPOINT'

/** The `hub_unreachable` error for a failed connection to `origin`; `cause` is the socket's error code or message. */
export const hubUnreachable = (origin: string, cause: string) => new AppError('hub_unreachable', `cannot reach the Hub at ${origin} (${cause}): ${UNREACHABLE_HINT}`, {endpoint: origin, cause})


/**
 * One JSON request over node:http (global fetch costs over 100 ms per short-lived process).
 * Connection failures become `hub_unreachable`; error envelopes become AppErrors with the
 * Hub's code, message and details.
 */
export function requestJson<T>(method: string, url: string, opts: RequestOptions = {}): Promise<HttpResponse<T>> {
  const u = new URL(url)
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body))
  const headers: Record<string, string> = {accept: 'application/json', ...opts.headers}
  if (payload) {
    headers['content-type'] = 'application/json'
    headers['content-length'] = String(payload.length)
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`
  const lib = u.protocol === 'https:' ? httpsModule() : http
  return new Promise((resolve, reject) => {
    const req = lib.request(u, {method, headers, timeout: opts.timeoutMs ?? 30_000}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let body: unknown = text
        if ((res.headers['content-type'] ?? '').includes('json') && text) {
          try {
            body = JSON.parse(text)
          } catch {
            body = text
          }
        }
        const status = res.statusCode ?? 0
        if (status >= 400) return reject(errorFromResponse(status, body, method, u))
        resolve({status, headers: res.headers, body: body as T})
      })
    })
    req.on('timeout', () => req.destroy(new AppError('hub_unreachable', `no answer from the Hub at ${u.origin} within ${(opts.timeoutMs ?? 30_000) / 1000}s`, {endpoint: u.origin})))
    req.on('error', (err) => {
      if (err instanceof AppError) return reject(err)
      reject(hubUnreachable(u.origin, (err as NodeJS.ErrnoException).code ?? err.message))
    })
    if (payload) req.write(payload)
    req.end()
  })
}

export function errorFromResponse(status: number, body: unknown, method: string, u: URL): AppError {
  const env = (body as {error?: {code?: string; message?: string; details?: Record<string, unknown>; requestId?: string}})?.error
  // A route this Hub does not have: an older Hub, whatever the command (exit code 3). Hubs
  // from before details.reason existed say so only in the message.
  if (status === 404 && env?.code === 'not_found' && (env.details?.reason === 'no_route' || /^no route /.test(env.message ?? ''))) {
    return new AppError('hub_unsupported', `this Hub does not offer ${method} ${u.pathname}; upgrade the Hub`, {...(env.requestId && {requestId: env.requestId})})
  }
  if (env?.code) {
    const details = {...env.details, ...(env.requestId && {requestId: env.requestId})}
    return new AppError(env.code as ErrorCode, env.message ?? env.code, details, status)
  }
  return new AppError('internal_error', `the Hub answered ${status} to ${method} ${u.pathname}`, {status}, status)
}
