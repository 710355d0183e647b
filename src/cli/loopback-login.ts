import {createHash, randomBytes} from 'node:crypto'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {AppError} from '../api/app-error.js'
import {ERROR_CODES, type ErrorCode} from '../api/error-codes.js'
import type {HubClient, SignedIn} from '../client/hub-client.js'

export const LOOPBACK_TIMEOUT_MS = 5 * 60_000

export interface LoopbackLoginOptions {
  client: HubClient
  /** Opens the sign-in URL; false when no browser could be started. */
  open: (url: string) => Promise<boolean>
  /** Tells the user what to do (stderr). */
  notify: (text: string) => void
  timeoutMs?: number
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function page(res: http.ServerResponse, status: number, title: string, text: string) {
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`
  res.writeHead(status, {'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store'}).end(body)
}

/** The Hub's `error` as a catalogue code (an unknown one is reported as the provider failing). */
const codeOf = (error: string): ErrorCode => (error in ERROR_CODES ? (error as ErrorCode) : 'oidc_failed')

/**
 * Browser sign-in through a loopback redirect (RFC 8252): listens on 127.0.0.1 at a random port,
 * sends the browser to the Hub's login route with that address, a state and an S256 challenge,
 * then redeems the one-time code the Hub redirects back with, proving the verifier. The
 * listener answers only its own callback with the right state, and closes after one answer.
 */
export async function loopbackLogin(o: LoopbackLoginOptions): Promise<SignedIn> {
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const state = randomBytes(16).toString('base64url')
  const server = http.createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const redirect = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`
  let timer: NodeJS.Timeout | undefined
  try {
    const done = new Promise<SignedIn>((resolve, reject) => {
      let settled = false
      server.on('request', async (req, res) => {
        const u = new URL(req.url ?? '/', redirect)
        if (settled || u.pathname !== '/callback' || u.searchParams.get('state') !== state) return page(res, 404, 'Not found', 'This address only receives the svc sign-in.')
        settled = true
        try {
          const error = u.searchParams.get('error')
          if (error) throw new AppError(codeOf(error), u.searchParams.get('error_description') || error)
          const code = u.searchParams.get('code')
          if (!code) throw new AppError('invalid_request', 'the sign-in came back without a code')
          const signed = await o.client.exchangeCliCode({code, verifier})
          page(res, 200, 'Signed in', `You are signed in to svc as ${signed.user.email}. You can close this window.`)
          resolve(signed)
        } catch (err) {
          page(res, 400, 'Sign-in failed', (err as Error).message)
          reject(err)
        }
      })
      timer = setTimeout(() => {
        settled = true
        reject(new AppError('login_expired', `no sign-in finished within ${Math.round((o.timeoutMs ?? LOOPBACK_TIMEOUT_MS) / 60_000)} minutes; run svc auth login again`))
      }, o.timeoutMs ?? LOOPBACK_TIMEOUT_MS)
    })
    const url = `${o.client.endpoint}/api/v1/auth/login?${new URLSearchParams({cli_redirect: redirect, cli_state: state, cli_challenge: challenge})}`
    const opened = await o.open(url)
    o.notify(
      opened
        ? `Opening your browser to sign in. If it does not open, visit:\n  ${url}\n`
        : `Open this address in a browser on this machine to sign in:\n  ${url}\n`,
    )
    return await done
  } finally {
    clearTimeout(timer)
    // Idle connections close now; the one that carried the answer closes once it is flushed.
    server.close()
    server.closeIdleConnections()
    server.unref()
  }
}
