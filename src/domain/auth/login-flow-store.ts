import {randomBytes} from 'node:crypto'
import {AppError} from '../../api/app-error.js'
import type {LoginFlow} from '../../store/repositories/login-flows.js'
import {iso} from '../shared/clock.js'
import {hashSecret} from '../shared/secrets.js'
import type {Deps} from '../deps.js'

export type FlowKind = 'web' | 'cli_code' | 'device' | 'web_link'

export const loginExpired = (message = 'this sign-in expired or was already used; start again') => new AppError('login_expired', message)

/**
 * Pending sign-in flows in the database, so whichever replica receives the next step can finish
 * it. A flow is addressed by a random handle that only its owner holds (the OAuth state, the
 * CLI's one-time code, the device handle); the row is keyed by the handle's SHA-256, so reading
 * the table does not yield usable handles.
 */
export function loginFlowStore(deps: Deps) {
  const {store, clock} = deps
  return {
    /** Creates a flow valid for `ttlMs`; returns its handle. Expired rows are swept on the way. */
    async create<T extends object>(kind: FlowKind, data: T, ttlMs: number): Promise<{handle: string; expiresAt: string}> {
      const now = clock.now()
      await store.loginFlows.deleteExpired(iso(now))
      const handle = randomBytes(32).toString('base64url')
      const expiresAt = iso(new Date(now.getTime() + ttlMs))
      await store.loginFlows.insert({id: hashSecret(handle), kind, data: data as Record<string, unknown>, createdAt: iso(now), expiresAt})
      return {handle, expiresAt}
    },

    /** The flow behind a handle, or null when unknown. Does not check expiry or use. */
    async find<T>(kind: FlowKind, handle: string): Promise<LoginFlow<T> | null> {
      return store.loginFlows.get<T>(hashSecret(handle), kind)
    },

    /** Throws `login_expired` when the flow is used or past its expiry. */
    check(flow: LoginFlow<unknown>): void {
      if (flow.consumedAt) throw loginExpired()
      if (flow.expiresAt <= iso(clock.now())) throw loginExpired('this sign-in expired; start again')
    },

    /** The flow behind a handle; `login_expired` when unknown, used or expired. */
    async findUsable<T>(kind: FlowKind, handle: string): Promise<LoginFlow<T>> {
      const flow = await store.loginFlows.get<T>(hashSecret(handle), kind)
      if (!flow) throw loginExpired()
      this.check(flow)
      return flow
    },

    /** Marks the flow used; throws `login_expired` for every caller but the first (single use). */
    async consume(flow: LoginFlow<unknown>): Promise<void> {
      if (!(await store.loginFlows.consume(flow.id, iso(clock.now())))) throw loginExpired()
    },

    update: (flow: LoginFlow<unknown>, data: object) => store.loginFlows.update(flow.id, data as Record<string, unknown>),
  }
}

export type LoginFlowStore = ReturnType<typeof loginFlowStore>
