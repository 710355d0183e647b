import {createSessions} from '../../src/domain/auth/sessions.js'
import {systemClock, iso, type Clock} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import type {User} from '../../src/store/repositories/users.js'
import type {TestHub} from './hub.js'

export interface TestUser {
  user: User
  /** An interactive session secret (credential kind `session`). */
  token: string
}

let n = 0

/**
 * Creates a user through the store and signs it in through the domain's sessions service, as
 * `svc auth login` would: the returned token is a real `session` credential of that Hub.
 */
export async function createUser(hub: TestHub, opts: {email?: string; displayName?: string; systemAdmin?: boolean; clock?: Clock} = {}): Promise<TestUser> {
  const clock = opts.clock ?? systemClock
  const email = opts.email ?? `user${++n}-${newId().slice(0, 8)}@example.test`
  const user = await hub.store.users.insert({id: newId(), email, displayName: opts.displayName ?? email.split('@')[0], systemAdmin: opts.systemAdmin ?? false, now: iso(clock.now())})
  const sessions = createSessions({store: hub.store, clock, logger: hub.logger, config: hub.config})
  const {token} = await sessions.create(user.id, 'cli')
  return {user, token}
}
