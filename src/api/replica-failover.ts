/**
 * When a request may go on to another Hub URL of the deployment (its replicas, CONTRACT "Hosted
 * at scale"): one definition for the hooks' reports, `svc status` and `svc mcp`.
 */

/** Socket errors of a connection that never opened: the request was not sent, so another Hub URL may take it. */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])

/** Answers of a load balancer or proxy with no replica behind it: another URL may do better. */
export const NO_REPLICA_STATUSES: ReadonlySet<number> = new Set([502, 503, 504])
