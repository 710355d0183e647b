import type {Logger} from 'pino'
import type {Store} from '../store/store.js'
import type {HubConfig} from './hub-config.js'
import type {Clock} from './shared/clock.js'

/** Explicit dependencies every domain service takes. */
export interface Deps {
  store: Store
  clock: Clock
  logger: Logger
  config: HubConfig
}
