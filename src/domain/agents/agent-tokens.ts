import {AppError} from '../../api/app-error.js'
import type {Authenticated} from '../auth/credentials.js'
import {iso} from '../shared/clock.js'
import {hashSecret, newId, newSecret, TOKEN_PREFIX} from '../shared/secrets.js'
import type {Deps} from '../deps.js'
import {scopesForRole} from './scopes.js'

export const AGENT_TOKEN_TTL_MS = 24 * 60 * 60 * 1000
/** Refresh is allowed from this long before expiry. */
export const REFRESH_WINDOW_MS = 12 * 60 * 60 * 1000
/**
 * How long a resolved agent token is reused without a database read. Revocations are announced
 * to every replica (AGENT_TOKENS_CHANNEL) and dropped at once; this bounds only a revocation
 * nobody announced: one written straight in the database, or one whose notification was lost
 * while a replica's PostgreSQL LISTEN connection was down.
 */
export const AGENT_TOKEN_CACHE_TTL_MS = 15_000
/** The store event channel that tells every replica an agent's tokens were revoked: `{agentId}`. */
export const AGENT_TOKENS_CHANNEL = 'svc_agent_tokens'
// A bound on memory: only valid tokens are cached, at most two per agent (a refresh keeps the one
// presented and the new one), so this is only reached by that many live agents.
const CACHE_MAX = 50_000

interface Cached {
  auth: Authenticated
  agentId: string
  expiresAt: number
  checkedAt: number
}

/**
 * Agent tokens: minted at dispatch from the agent's role, stored hashed, refreshable before
 * expiry. A resolved token is cached per raw secret (no SHA-256 and no read per request, which
 * an agent's high-frequency status reports would pay); a revocation (stop, delete, failed start)
 * is published over the store's events and drops the agent's tokens from every replica's cache
 * (PostgreSQL LISTEN/NOTIFY; SQLite is one node), so the next request anywhere reads the row and
 * is refused. A revocation that was not announced is seen within AGENT_TOKEN_CACHE_TTL_MS; one
 * announced while this replica's listener was down is covered by dropping the whole cache when
 * the listener drops and when it listens again (StoreEvents.onGap).
 */
export function createAgentTokens(deps: Deps) {
  const {store, clock} = deps
  const cache = new Map<string, Cached>()
  const byAgent = new Map<string, Set<string>>()
  // Counts revocations seen: a resolve that read its rows before one arrived does not cache
  // what it read (the row may predate the revocation the notification announced).
  let revocations = 0

  const drop = (agentId: string) => {
    revocations++
    const secrets = byAgent.get(agentId)
    if (!secrets) return
    byAgent.delete(agentId)
    for (const s of secrets) cache.delete(s)
  }
  const remember = (secret: string, entry: Cached) => {
    if (cache.size >= CACHE_MAX) {
      cache.clear()
      byAgent.clear()
    }
    cache.set(secret, entry)
    let set = byAgent.get(entry.agentId)
    if (!set) byAgent.set(entry.agentId, (set = new Set()))
    set.add(secret)
  }
  const unsubscribe = store.events.subscribe(AGENT_TOKENS_CHANNEL, (payload) => {
    if (typeof payload.agentId === 'string') drop(payload.agentId)
  })
  // Revocations announced while this replica was not listening are lost: forget every cached
  // token (and what resolves in flight) when the listener drops and once it listens again.
  const unGap = store.events.onGap(() => {
    revocations++
    cache.clear()
    byAgent.clear()
  })

  /** The cached resolution of `secret`, if fresh; throws 401 once its token expired. */
  const fromCache = (secret: string, nowMs: number): Authenticated | null => {
    const hit = cache.get(secret)
    if (!hit || nowMs - hit.checkedAt >= AGENT_TOKEN_CACHE_TTL_MS) return null
    if (hit.expiresAt <= nowMs) throw new AppError('unauthorized', 'agent token expired; refresh it before expiry')
    return hit.auth
  }

  return {
    async mint(agent: {id: string; role: string}): Promise<{token: string; expiresAt: string}> {
      const t = clock.now()
      const token = newSecret(TOKEN_PREFIX.agent)
      const expiresAt = iso(new Date(t.getTime() + AGENT_TOKEN_TTL_MS))
      await store.agents.insertToken({id: newId(), agentId: agent.id, tokenHash: hashSecret(token), scopes: scopesForRole(agent.role), now: iso(t), expiresAt})
      return {token, expiresAt}
    },

    /**
     * Synchronous lookup for hot routes: the resolution of an agent token from the cache, or
     * null when it must be read (not cached, stale, or not an agent token). Throws 401 for a
     * cached token that expired since.
     */
    cached(secret: string): Authenticated | null {
      return secret.startsWith(TOKEN_PREFIX.agent) ? fromCache(secret, clock.now().getTime()) : null
    },

    /** Credential resolver for `svc_agt_` secrets (null for other secrets). */
    async resolve(secret: string): Promise<Authenticated | null> {
      if (!secret.startsWith(TOKEN_PREFIX.agent)) return null
      const nowMs = clock.now().getTime()
      const hit = fromCache(secret, nowMs)
      if (hit) return hit
      const seen = revocations
      const hash = hashSecret(secret)
      const row = await store.agents.tokenByHash(hash)
      if (!row || row.revokedAt) throw new AppError('unauthorized', 'agent token revoked or unknown')
      if (Date.parse(row.expiresAt) <= nowMs) throw new AppError('unauthorized', 'agent token expired; refresh it before expiry')
      const agent = await store.agents.get(row.agentId)
      if (!agent || agent.deletedAt) throw new AppError('unauthorized', 'the agent of this token no longer exists')
      const auth: Authenticated = {principal: {kind: 'agent', id: agent.id, projectId: agent.projectId}, credentialKind: 'agent', scopes: new Set(row.scopes)}
      if (revocations === seen) remember(secret, {auth, agentId: agent.id, expiresAt: Date.parse(row.expiresAt), checkedAt: nowMs})
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
      const fresh = await this.mint(agent)
      // At most two live tokens: the one presented (processes may still hold it until they read the
      // new one) and the new one. Every refresh with the same old token would otherwise mint one
      // more live token, without bound.
      const dropped = await store.agents.revokeTokensExcept(agentId, [hashSecret(current), hashSecret(fresh.token)], iso(clock.now()))
      if (dropped) {
        drop(agentId)
        await store.events.publish(AGENT_TOKENS_CHANNEL, {agentId}).catch((err) => deps.logger.warn({err, agentId}, 'token revocation not announced; other replicas drop the tokens when their cache entries expire'))
      }
      return fresh
    },

    /**
     * Revokes every token of an agent (stop, delete, failed start) and announces it once
     * committed, so every replica drops them from its cache. This replica's cache is cleared
     * before the answer; a failed announcement is logged (other replicas then see it within
     * AGENT_TOKEN_CACHE_TTL_MS).
     */
    async revokeAll(agentId: string): Promise<void> {
      await store.agents.revokeTokens(agentId, iso(clock.now()))
      drop(agentId)
      await store.events.publish(AGENT_TOKENS_CHANNEL, {agentId}).catch((err) => deps.logger.warn({err, agentId}, 'token revocation not announced; other replicas drop the tokens when their cache entries expire'))
    },

    close(): void {
      unsubscribe()
      unGap()
    },
  }
}

export type AgentTokens = ReturnType<typeof createAgentTokens>
