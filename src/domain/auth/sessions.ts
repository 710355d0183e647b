import {iso} from '../shared/clock.js'
import {hashSecret, newId, newSecret, TOKEN_PREFIX} from '../shared/secrets.js'
import type {Deps} from '../deps.js'

/** Interactive sessions: the web sign-in cookie and the CLI's `svc auth login` credential. */
export function createSessions(deps: Deps) {
  const {store, clock, config} = deps
  return {
    async create(userId: string, source: 'web' | 'cli'): Promise<{token: string; expiresAt: string}> {
      const now = clock.now()
      const token = newSecret(TOKEN_PREFIX.session)
      const expiresAt = iso(new Date(now.getTime() + config.sessionTtlMs))
      await store.credentials.insertSession({id: newId(), userId, source, createdAt: iso(now), expiresAt, revokedAt: null, tokenHash: hashSecret(token)})
      return {token, expiresAt}
    },
    /** Signs a session out; unknown or already revoked secrets are ignored (logout is idempotent). */
    async revoke(secret: string): Promise<void> {
      const s = await store.credentials.sessionByHash(hashSecret(secret))
      if (s) await store.credentials.revokeSession(s.id, iso(clock.now()))
    },
  }
}

export type Sessions = ReturnType<typeof createSessions>
