import type {Logger} from 'pino'
import type {Store} from '../../store/store.js'
import type {Clock} from '../shared/clock.js'
import {iso} from '../shared/clock.js'
import {backfillDelegationEdges} from './backfill.js'

/**
 * Delegation data migrations at start-up, run once the schema is current (under the migration
 * lock on PostgreSQL): the edge backfill, then the provenance adoption. A failure here is
 * logged and never stops the Hub from starting (SPEC "Start-up migration run" 6).
 */
export async function runDelegationStartup(store: Store, clock: Clock, logger: Logger): Promise<void> {
  try {
    await backfillDelegationEdges(store, iso(clock.now()), logger)
  } catch (err) {
    logger.error({err: (err as Error).message}, 'delegation edge backfill failed; it runs again at the next start')
    return
  }
}
