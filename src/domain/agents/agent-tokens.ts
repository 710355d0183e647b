import {AppError} from '../../api/app-error.js'
import type {Authenticated} from '../auth/credentials.js'
import {iso} from '../shared/clock.js'
import {hashSecret, newId, newSecret, TOKEN_PREFIX} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import {scopesForRole} from './scopes.js'

export const AGENT_TOKEN_TTL_MS = 24 * 60 * 60 * 1000
/** Refresh is allowed from this long before expiry. */
export const REFRESH_WINDOW_MS = 12 * 60 * 60 * 1000
// How long a resolved agent token is reused without a database read, where the caller allows it
// (`cached`: the status report, whose write checks the token again in its own transaction, so a
// revocation on any replica holds at once there too). Revocation on this replica clears it.
const CACHE_TTL_MS = 15_000

interface Cached {
  auth: Authenticated
  agentId: string
  expiresAt: number
  checkedAt: number
}

/**
 * Agent tokens: minted at dispatch from the agent's role, stored hashed, refreshable before
 * expiry. Resolution may be cached (`cached`), so the agent's high-frequency status reports need
 * no read before their write; every other route reads the token, so a revocation on any replica
 * holds at once. The caller gets the token's hash (`tokenHash`) to check it again where it writes.
 */
export function createAgentTokens(deps: Deps) {
  const {store, clock} = deps
  const cache = new Map<string, Cached>()

  return {
    async mint(agent: {id: string; role: string}): Promise<{token: string; expiresAt: string}> {
      const t = clock.now()
      const token = newSecret(TOKEN_PREFIX.agent)
      const expiresAt = iso(new Date(t.getTime() + AGENT_TOKEN_TTL_MS))
      await store.agents.insertToken({id: newId(), agentId: agent.id, tokenHash: hashSecret(token), scopes: scopesForRole(agent.role), now: iso(t), expiresAt})
      return {token, expiresAt}
    },

    /**
     * Credential resolver for `svc_agt_` secrets (null for other secrets). With `cached`, a token
     * resolved within CACHE_TTL_MS is not read again: only for callers that check `tokenHash`
     * in the transaction of their write (status-writer.ts), since another replica's revocation
     * does not clear this cache.
     */
    async resolve(secret: string, opts: {cached?: boolean} = {}): Promise<Authenticated | null> {
      if (!secret.startsWith(TOKEN_PREFIX.agent)) return null
      const hash = hashSecret(secret)
      const nowMs = clock.now().getTime()
      const hit = opts.cached ? cache.get(hash) : undefined
      if (hit && nowMs - hit.checkedAt < CACHE_TTL_MS) {
        if (hit.expiresAt <= nowMs) throw new AppError('unauthorized', 'agent token expired; refresh it before expiry')
        return hit.auth
      }
      const row = await store.agents.tokenByHash(hash)
      if (!row || row.revokedAt) throw new AppError('unauthorized', 'agent token revoked or unknown')
      if (Date.parse(row.expiresAt) <= nowMs) throw new AppError('unauthorized', 'agent token expired; refresh it before expiry')
      const agent = await store.agents.get(row.agentId)
      if (!agent || agent.deletedAt) throw new AppError('unauthorized', 'the agent of this token no longer exists')
      const auth: Authenticated = {principal: {kind: 'agent', id: agent.id, projectId: agent.projectId}, credentialKind: 'agent', scopes: new Set(row.scopes), tokenHash: hash}
      if (cache.size > 50_000) cache.clear()
      cache.set(hash, {auth, agentId: agent.id, expiresAt: Date.parse(row.expiresAt), checkedAt: nowMs})
      return auth
    },

    /** Issues a fresh token to an agent presenting its current one, within the refresh window. */
    async refresh(agentId: string, current: string): Promise<{token: string; expiresAt: string}> {
      const row = await store.agents.tokenByHash(hashSecret(current))
      if (!row || row.agentId !== agentId || row.revokedAt) throw new AppError('unauthorized', 'present the agent\'s current token to refresh it')
      const left = Date.parse(row.expiresAt) - clock.now().getTime()
      if (left > REFRESH_WINDOW_MS) {
        throw new AppError('conflict', `the token is refreshable in its last ${REFRESH_WINDOW_MS / 3_600_000} hours; it expires at ${row.expiresAt}`)
      }
      const agent = await store.agents.get(agentId)
      if (!agent || agent.deletedAt) throw new AppError('unauthorized', 'the agent of this token no longer exists')
      return this.mint(agent)
    },

    /** Revokes every token of an agent (stop, delete). */
    async revokeAll(agentId: string): Promise<void> {
      await store.agents.revokeTokens(agentId, iso(clock.now()))
      for (const [hash, c] of cache) if (c.agentId === agentId) cache.delete(hash)
    },

    /** Forgets a token a write found revoked (on another replica): its next request reads it. */
    forget(hash: string): void {
      cache.delete(hash)
    },
  }
}

export type AgentTokens = ReturnType<typeof createAgentTokens>
