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
  /** Records a telemetry event; never throws and never waits (absent: telemetry not wired). */
  telemetry?: (event: DomainEvent) => void
}

/** A telemetry event of the domain; `agentId` selects that agent's telemetry override. */
export interface DomainEvent {
  type: string
  attributes: Record<string, string | number | boolean>
  agentId?: string
}
