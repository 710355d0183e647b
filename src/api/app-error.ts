import {type ErrorCode, statusOf} from './error-codes.js'

/**
 * The one error type that crosses layers. The domain throws it; the Hub's error handler writes
 * it as the envelope of CONTRACT.md; the client rebuilds it from an envelope.
 */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly details?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, status?: number) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.status = status ?? statusOf(code)
    this.details = details
  }
}

export const notFound = (what: string, details?: Record<string, unknown>) =>
  new AppError('not_found', `${what} not found`, details)

export const forbidden = (message: string, details?: Record<string, unknown>) =>
  new AppError('forbidden', message, details)

export interface ErrorEnvelope {
  error: {code: string; message: string; details?: Record<string, unknown>; requestId: string}
}
