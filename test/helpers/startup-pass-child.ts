// A start-up adoption in its own process, for the crash test (run with `node --import tsx`):
//   startup-pass-child.ts <sqlite file>
// Brings the schema to the current release and runs the delegation start-up migration (the
// snapshot, then one transaction per hop), as a Hub start does; the test kills it mid-pass.
import pino from 'pino'
import {runDelegationStartup} from '../../src/domain/delegation/startup.js'
import {systemClock} from '../../src/domain/shared/clock.js'
import {openStore} from '../../src/store/store.js'

const store = await openStore({driver: 'sqlite', url: process.argv[2]})
await store.migrate()
process.stdout.write('migrating\n')
await runDelegationStartup(store, systemClock, pino({level: 'silent'}))
await store.close()
process.stdout.write('done\n')
