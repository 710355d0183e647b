import {createHash} from 'node:crypto'
import {AppError} from '../../api/app-error.js'

/** Where the CLI waits for the end of a browser sign-in (validated by `cliTargetOf`). */
export interface CliTarget {
  redirect: string
  state: string
  challenge: string
}

const invalid = (path: string, message: string) =>
  new AppError('validation_error', `invalid request: ${path} ${message}`, {fields: [{path, message}]})

/**
 * The page to land on after a web sign-in. Only a path on this Hub is accepted: an absolute URL,
 * a protocol-relative `//host` or a backslash (which browsers treat as a slash) would let a link
 * to the Hub send a freshly signed-in user to another site (open redirect).
 */
export function returnToOf(raw: string | undefined, publicUrl: string): string {
  if (raw === undefined || raw === '') return '/'
  const bad = () => invalid('querystring.return_to', 'must be a path on this Hub, like /projects')
  if (raw.length > 2048 || !raw.startsWith('/') || raw.startsWith('//') || /[\\\u0000-\u001f\u007f\s]/.test(raw)) throw bad()
  const base = new URL(publicUrl)
  const resolved = new URL(raw, base)
  if (resolved.origin !== base.origin) throw bad()
  return resolved.pathname + resolved.search + resolved.hash
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])
const STATE = /^[A-Za-z0-9._~-]{8,200}$/
// S256 challenge: base64url of a SHA-256 digest, always 43 characters.
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/
// RFC 7636: 43 to 128 unreserved characters.
export const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/**
 * The CLI half of a browser sign-in: all three parameters or none. The redirect must be a plain
 * http URL on a loopback address with a port (RFC 8252), so the one-time code never leaves the
 * user's machine and the Hub cannot be used to bounce codes to another host.
 */
export function cliTargetOf(q: {cli_redirect?: string; cli_state?: string; cli_challenge?: string}): CliTarget | null {
  const given = [q.cli_redirect, q.cli_state, q.cli_challenge].filter((v) => v !== undefined)
  if (given.length === 0) return null
  const missing = (['cli_redirect', 'cli_state', 'cli_challenge'] as const).filter((k) => q[k] === undefined)
  if (missing.length) {
    throw new AppError('validation_error', `invalid request: ${missing.join(', ')} required with the other cli_ parameters`, {
      fields: missing.map((k) => ({path: `querystring.${k}`, message: 'is required with the other cli_ parameters'})),
    })
  }
  let u: URL
  try {
    u = new URL(q.cli_redirect!)
  } catch {
    throw invalid('querystring.cli_redirect', 'must be an http://127.0.0.1:<port>/... URL')
  }
  if (u.protocol !== 'http:' || !LOOPBACK_HOSTS.has(u.hostname) || !u.port || u.username || u.password || u.hash) {
    throw invalid('querystring.cli_redirect', 'must be an http loopback URL with a port, like http://127.0.0.1:53682/callback')
  }
  if (!STATE.test(q.cli_state!)) throw invalid('querystring.cli_state', 'must be 8 to 200 URL-safe characters')
  if (!CHALLENGE.test(q.cli_challenge!)) throw invalid('querystring.cli_challenge', 'must be a base64url SHA-256 (S256) challenge of 43 characters')
  return {redirect: u.toString(), state: q.cli_state!, challenge: q.cli_challenge!}
}

/** The S256 PKCE challenge of a verifier. */
export const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

/** `target` with extra query parameters (existing ones kept). */
export function withQuery(target: string, params: Record<string, string>): string {
  const u = new URL(target)
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
  return u.toString()
}
