/**
 * Preview links: `<hub>/agents/<id>/ports/<port>/~<token>/...`. A previewed page is served in a
 * CSP sandbox (an opaque origin: its scripts cannot use the Hub's API with the person's
 * session), and a browser sends no cookie with such a page's own requests, so the page's
 * address carries a capability instead: HMAC-signed, naming the user, the agent and the port,
 * valid for PREVIEW_TTL_MS. It grants nothing but that preview, and every request is authorized
 * again as the user (reading the agent), so a revoked role ends it at once.
 */
import {createHmac, timingSafeEqual} from 'node:crypto'

export const PREVIEW_TTL_MS = 12 * 60 * 60_000
/** The path segment that carries a token: `~` then the token (never a start of a real app path). */
export const TOKEN_SEGMENT = /^~([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/

export interface PreviewGrant {
  userId: string
  agentId: string
  port: number
  expiresAt: number
}

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url')

export function previewTokens(key: Buffer) {
  const sign = (body: string) => createHmac('sha256', key).update(`svc-preview\n${body}`).digest()
  return {
    mint(g: Omit<PreviewGrant, 'expiresAt'>, now: number): string {
      const body = b64(JSON.stringify({u: g.userId, a: g.agentId, p: g.port, e: now + PREVIEW_TTL_MS}))
      return `${body}.${b64(sign(body))}`
    },
    /** The grant of a valid, unexpired token for this agent and port; null otherwise. */
    verify(token: string, agentId: string, port: number, now: number): PreviewGrant | null {
      const [body, mac] = token.split('.')
      if (!body || !mac) return null
      const want = sign(body)
      const got = Buffer.from(mac, 'base64url')
      if (got.length !== want.length || !timingSafeEqual(got, want)) return null
      try {
        const g = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {u: string; a: string; p: number; e: number}
        if (g.a !== agentId || g.p !== port || typeof g.u !== 'string' || !(g.e > now)) return null
        return {userId: g.u, agentId: g.a, port: g.p, expiresAt: g.e}
      } catch {
        return null
      }
    },
  }
}
