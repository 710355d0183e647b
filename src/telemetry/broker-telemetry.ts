import type {Logger} from 'pino'
import {toTelemetryConfig} from './config.js'
import type {Attributes, TelemetryEvent} from './filter.js'
import {createTelemetryPipeline} from './pipeline.js'

export interface BrokerTelemetryOptions {
  /** Sends a batch to the Hub (the tunnel's `telemetry` event); throws when it cannot. */
  send: (events: TelemetryEvent[]) => void
  /** The broker's `telemetry` settings tree, read again on every change. */
  tree: () => unknown
  /** Subscribes to settings changes; returns an unsubscribe. */
  onChange?: (fn: () => void) => () => void
  logger: Logger
  debug: boolean
  /**
   * The Hub's co-located broker: no `local` output of its own, since the Hub's local sink writes
   * what it reports (the same process would write each event twice).
   */
  colocated?: boolean
}

/**
 * Telemetry of a runtime broker: its events pass the broker's own filter and are reported to the
 * Hub every `telemetry.hub.report_interval` (hub reporting); the Hub exports them. With hub
 * reporting off, the broker's `cloud` and `local` sinks export them itself.
 */
export function createBrokerTelemetry(o: BrokerTelemetryOptions) {
  const pipeline = createTelemetryPipeline({service: 'svc-broker', debug: o.debug, logger: o.logger, report: o.send})
  let unsubscribe: (() => void) | undefined
  let applying = Promise.resolve()
  const apply = () =>
    (applying = applying
      .then(() => {
        const config = toTelemetryConfig(o.tree())
        if (o.colocated) config.local.enabled = false
        return pipeline.configure(config)
      })
      .catch((err) => o.logger.warn({err}, 'telemetry: configuration not applied')))
  return {
    pipeline,
    emit(type: string, attributes: Attributes) {
      pipeline.emit({type, time: Date.now(), attributes})
    },
    async start() {
      unsubscribe = o.onChange?.(() => void apply())
      await apply()
    },
    async close() {
      unsubscribe?.()
      await applying
      await pipeline.shutdown()
    },
  }
}

export type BrokerTelemetry = ReturnType<typeof createBrokerTelemetry>

/**
 * Hub reporting over a broker's tunnel (event `telemetry`). A batch sent while the tunnel is down
 * fails, and is counted as failed, rather than vanish as tunnel events do while disconnected.
 */
export const reportOverTunnel =
  (broker: {connected: boolean; tunnel: {event(event: string, data: unknown): void}}) =>
  (events: TelemetryEvent[]) => {
    if (!broker.connected) throw new Error('the tunnel to the Hub is not connected')
    broker.tunnel.event('telemetry', {events})
  }
