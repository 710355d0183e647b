import pino from 'pino'
import {expect, it} from 'vitest'
import {DEV_USER} from '../../src/domain/hub-config.js'
import {systemClock} from '../../src/domain/shared/clock.js'
import {createUsersService} from '../../src/domain/users/users-service.js'
import type {Store} from '../../src/store/store.js'
import {describeEachDialect} from '../helpers/hub.js'
import {createHubDb, openStoreOn, type HubDb} from '../helpers/restart-hub.js'

/**
 * Replicas starting at the same moment on one database each make sure the dev user exists. One
 * of them reads "no dev user", another inserts it, then the first inserts too: that start must
 * go on with the row the other wrote instead of failing on the unique key.
 */
describeEachDialect('dev user at start-up', (dialect) => {
  it('a start that loses the race to insert the dev user uses the row the other wrote', async () => {
    const db: HubDb = await createHubDb(dialect)
    const mine = await openStoreOn(db)
    const other = await openStoreOn(db)
    try {
      // The other replica's insert lands between this one's read and its insert.
      const racing: Store = {...mine, users: {...mine.users, get: async (id: string) => {
        const seen = await mine.users.get(id)
        if (id === DEV_USER.id && !seen) await createUsersService({store: other, clock: systemClock, logger: pino({level: 'silent'}), config: {} as never}).ensureDevUser()
        return seen
      }}}
      const users = createUsersService({store: racing, clock: systemClock, logger: pino({level: 'silent'}), config: {} as never})
      const dev = await users.ensureDevUser()
      expect(dev).toMatchObject({id: DEV_USER.id, systemAdmin: true})
      expect((await mine.users.list()).filter((u) => u.id === DEV_USER.id)).toHaveLength(1)
    } finally {
      await mine.close()
      await other.close()
      await db.drop()
    }
  })
})
