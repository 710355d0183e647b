import type {Logger} from 'pino'
import type {Store} from '../../store/store.js'
import type {Clock} from '../shared/clock.js'
import {iso} from '../shared/clock.js'
import {backfillDelegationEdges} from './backfill.js'
import {runStartupAdoption, type StartupAdoptionHooks} from './startup-adoption.js'

/**
 * Delegation data migrations at start-up, run once the schema is current (under the migration
 * lock on PostgreSQL): the edge backfill, then the provenance adoption. A failure here is
 * logged and never stops the Hub from starting (SPEC "Start-up migration run" 6). The adoption
 * does not run after a failed backfill: it would snapshot agents without their edges.
 * `hooks` are for failure injection in tests (src/main.ts HubOptions.delegationStartup).
 */
export async function runDelegationStartup(store: Store, clock: Clock, logger: Logger, hooks: StartupAdoptionHooks = {}): Promise<void> {
  try {
    await backfillDelegationEdges(store, iso(clock.now()), logger)
  } catch (err) {
    logger.error({err: (err as Error).message}, 'delegation edge backfill failed; it runs again at the next start')
    return
  }
  // runStartupAdoption catches its own failures; the guard keeps that promise of a Hub that starts.
  await runStartupAdoption(store, clock, logger, hooks).catch((err: Error) => logger.error({err: err.message}, 'delegation provenance adoption failed; it runs again at the next start'))
}
