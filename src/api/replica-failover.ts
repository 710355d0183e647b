import {AppError} from './app-error.js'

/**
 * When a request may go on to another Hub URL of the deployment (its replicas, CONTRACT "Hosted
 * at scale"): one definition for the hooks' reports, `svc status` and `svc mcp`.
 */

/** Socket errors of a connection that never opened: the request was not sent, so another Hub URL may take it. */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])

/** Answers of a load balancer or proxy with no replica behind it: another URL may do better. */
export const NO_REPLICA_STATUSES: ReadonlySet<number> = new Set([502, 503, 504])

/**
 * May a call that failed at one Hub URL go to the next? When it was never sent (the connection
 * did not open), whatever the call; a read (GET) also when it went unanswered or a proxy found no
 * replica, or the replica could not reach its database. A write that may have reached a replica is not sent twice: it fails as it did.
 */
export function mayTryNext(err: unknown, method: string): boolean {
  if (!(err instanceof AppError)) return false
  const cause = err.details?.cause
  if (err.code === 'hub_unreachable' && typeof cause === 'string' && NOT_SENT_CODES.has(cause)) return true
  if (method !== 'GET') return false
  // not_ready: that replica could not open a database connection (nothing ran): another may.
  return err.code === 'hub_unreachable' || err.code === 'not_ready' || (err.code === 'internal_error' && NO_REPLICA_STATUSES.has(Number(err.details?.status)))
}
