import {statSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * Issue 22 item 12 (file modes): a hosted Hub on the embedded database creates ~/.svc 0700 and
 * its database files 0600, whatever the umask (it was 755 and 644).
 */
describe('hosted install: home and database file modes', () => {
  let hub: TestHub
  const umask = process.umask(0o022)
  beforeAll(async () => {
    hub = await startTestHub('sqlite', {env: {SVC_SERVER_MODE: 'hosted', SVC_SERVER_HUB_HOST: '127.0.0.1'}})
  })
  afterAll(async () => {
    await hub?.dispose()
    process.umask(umask)
  })

  it('~/.svc is 0700 and hub.db, its WAL and shared-memory files are 0600', () => {
    const mode = (p: string) => statSync(p).mode & 0o777
    expect(mode(join(hub.home, '.svc'))).toBe(0o700)
    for (const f of ['hub.db', 'hub.db-wal', 'hub.db-shm']) expect([f, mode(join(hub.home, '.svc', f))]).toEqual([f, 0o600])
  })
})
