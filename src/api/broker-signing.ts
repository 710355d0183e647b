import {createHash, createHmac, randomBytes, timingSafeEqual} from 'node:crypto'

/**
 * HMAC-SHA256 signing of broker-to-Hub requests (and of the tunnel upgrade). The signature covers
 * the method, path, sorted query, timestamp, nonce and the SHA-256 of the body, so a captured
 * request cannot be altered or, within the skew window, replayed (the Hub remembers nonces).
 */
export const SIGNATURE_HEADERS = {
  brokerId: 'x-svc-broker-id',
  timestamp: 'x-svc-timestamp',
  nonce: 'x-svc-nonce',
  signature: 'x-svc-signature',
  /** Set on requests a broker makes on behalf of a user (credential kind broker_for_user). */
  forUser: 'x-svc-for-user',
} as const

export const MAX_SKEW_SECONDS = 300

const sha256 = (body: string | Buffer) => createHash('sha256').update(body).digest('hex')

function canonicalQuery(search: string): string {
  const params = new URLSearchParams(search)
  return [...params.entries()]
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&')
}

export function canonicalString(method: string, pathWithQuery: string, timestamp: string, nonce: string, body: string | Buffer, forUser = ''): string {
  const u = new URL(pathWithQuery, 'http://x')
  return [method.toUpperCase(), u.pathname, canonicalQuery(u.search), timestamp, nonce, sha256(body), forUser].join('\n')
}

export function signRequest(
  brokerId: string,
  secret: string,
  method: string,
  pathWithQuery: string,
  body: string | Buffer = '',
  opts: {now?: number; forUser?: string} = {},
): Record<string, string> {
  const timestamp = String(Math.floor((opts.now ?? Date.now()) / 1000))
  const nonce = randomBytes(16).toString('hex')
  const signature = createHmac('sha256', secret).update(canonicalString(method, pathWithQuery, timestamp, nonce, body, opts.forUser)).digest('hex')
  return {
    [SIGNATURE_HEADERS.brokerId]: brokerId,
    [SIGNATURE_HEADERS.timestamp]: timestamp,
    [SIGNATURE_HEADERS.nonce]: nonce,
    [SIGNATURE_HEADERS.signature]: signature,
    ...(opts.forUser && {[SIGNATURE_HEADERS.forUser]: opts.forUser}),
  }
}

export type VerifyFailure = 'missing_headers' | 'clock_skew' | 'bad_signature' | 'replayed'

/** Checks a signature with the broker's secret; the caller checks the nonce for replay. */
export function verifySignature(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  method: string,
  pathWithQuery: string,
  body: string | Buffer,
  nowMs = Date.now(),
): VerifyFailure | null {
  const h = (name: string) => {
    const v = headers[name]
    return typeof v === 'string' ? v : undefined
  }
  const ts = h(SIGNATURE_HEADERS.timestamp)
  const nonce = h(SIGNATURE_HEADERS.nonce)
  const sig = h(SIGNATURE_HEADERS.signature)
  if (!ts || !nonce || !sig || !/^\d+$/.test(ts) || !/^[0-9a-f]{64}$/.test(sig)) return 'missing_headers'
  if (Math.abs(nowMs / 1000 - Number(ts)) > MAX_SKEW_SECONDS) return 'clock_skew'
  const expected = createHmac('sha256', secret).update(canonicalString(method, pathWithQuery, ts, nonce, body, h(SIGNATURE_HEADERS.forUser) ?? '')).digest()
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return 'bad_signature'
  return null
}

/**
 * Remembers nonces for the skew window so a signed request is accepted once.
 *
 * The Map keeps insertion order, and a nonce is (re)inserted with the time it was accepted, so
 * the oldest entries are at its front: each call drops expired entries from the front until the
 * first live one. That is O(1) amortized per call (each entry is dropped once), where a sweep
 * of every entry once the cache passed 10k cost a full scan per call under a steady flood.
 * A clock that steps back only delays expiry of what was inserted after it (the front stops at
 * the first live entry); nothing expires early, so a replay is never accepted in its window.
 */
export class NonceCache {
  private readonly seen = new Map<string, number>()
  constructor(private readonly windowMs = MAX_SKEW_SECONDS * 2 * 1000) {}

  /** True the first time a nonce is seen within the window. */
  accept(nonce: string, nowMs = Date.now()): boolean {
    this.expire(nowMs)
    const at = this.seen.get(nonce)
    if (at !== undefined && nowMs - at < this.windowMs) return false
    // Deleted first so it moves to the back: Map.set on an existing key keeps its old place.
    this.seen.delete(nonce)
    this.seen.set(nonce, nowMs)
    return true
  }

  /** Nonces remembered now (for tests and metrics). */
  get size(): number {
    return this.seen.size
  }

  private expire(nowMs: number) {
    for (const [n, at] of this.seen) {
      if (nowMs - at < this.windowMs) return
      this.seen.delete(n)
    }
  }
}
