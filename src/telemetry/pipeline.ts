import {isDeepStrictEqual} from 'node:util'
import {ROOT_CONTEXT, SpanKind, type Tracer} from '@opentelemetry/api'
import {resourceFromAttributes} from '@opentelemetry/resources'
import {BasicTracerProvider, type SpanExporter} from '@opentelemetry/sdk-trace-base'
import type {Logger} from 'pino'
import {DropOldestBatchProcessor, type BatchStats} from './batch-processor.js'
import type {FilterConfig, TelemetryConfig} from './config.js'
import {cloudExporter, EventExporter, localExporter} from './exporters.js'
import {filterEvent, type Attributes, type TelemetryEvent} from './filter.js'

export type SinkName = 'cloud' | 'hub' | 'local'

export interface PipelineOptions {
  /** `service.name` of every span (`svc-hub`, `svc-broker`). */
  service: string
  /** Debug mode of the process (`filter.respect_debug_mode`). */
  debug: boolean
  logger: Logger
  /**
   * Hub reporting: sends filtered events to the Hub every `hub.report_interval`. Absent on the
   * Hub itself, whose pipeline is where reports end up.
   */
  report?: (events: TelemetryEvent[]) => Promise<void> | void
  random?: () => number
  stderr?: {write(text: string): unknown}
  /**
   * Longest one cloud export may take, retries included. Default: the SDK's, 10 s or
   * OTEL_EXPORTER_OTLP_TRACES_TIMEOUT / OTEL_EXPORTER_OTLP_TIMEOUT.
   */
  exportTimeoutMs?: number
  /** Longest `shutdown` waits for queued spans to export (default 5 s). */
  shutdownTimeoutMs?: number
}

export interface EmitOptions {
  /** The event was filtered by the broker or agent that reported it (no second hashing or sampling). */
  reported?: boolean
  /** The filter of this event when a template or agent overrides the process's own. */
  filter?: FilterConfig
}

export interface PipelineStats {
  /** Events the filter kept out (excluded, not included or sampled out). */
  filtered: number
  sinks: Partial<Record<SinkName, BatchStats>>
}

export interface TelemetryPipeline {
  /** Records one event; never waits on an exporter and never throws. */
  emit(event: TelemetryEvent, opts?: EmitOptions): void
  /** Applies a configuration; the same configuration again is a no-op. Old sinks flush in the background. */
  configure(config: TelemetryConfig): Promise<void>
  config(): TelemetryConfig | null
  /** Exports everything queued in every sink (tests, shutdown). */
  flush(): Promise<void>
  stats(): PipelineStats
  shutdown(): Promise<void>
}

interface Active {
  config: TelemetryConfig
  provider: BasicTracerProvider | null
  tracer: Tracer | null
  sinks: Partial<Record<SinkName, DropOldestBatchProcessor>>
}

/** Sinks a configuration turns on; an empty object when telemetry is off. */
async function sinksFor(config: TelemetryConfig, opts: PipelineOptions): Promise<Partial<Record<SinkName, SpanExporter>>> {
  if (!config.enabled) return {}
  const out: Partial<Record<SinkName, SpanExporter>> = {}
  const reporting = config.hub.enabled && !!opts.report
  if (reporting) out.hub = new EventExporter(opts.report!)
  // A process that reports to the Hub leaves cloud export to the Hub: both would send each event twice.
  if (!reporting && config.cloud.enabled && config.cloud.endpoint) out.cloud = await cloudExporter(config.cloud, opts.exportTimeoutMs)
  // Local output with no file goes to stderr: SVC_TELEMETRY_DEBUG alone shows something.
  if (config.local.enabled) out.local = localExporter({...config.local, console: config.local.console || !config.local.file}, opts.stderr)
  return out
}

/**
 * The telemetry pipeline of one process: events pass the filter, become spans of an
 * OpenTelemetry tracer provider (resource: `service.name` plus `telemetry.resource`), and each
 * enabled sink batches them on its own. Reconfiguring swaps the provider; the old one drains.
 */
export function createTelemetryPipeline(opts: PipelineOptions): TelemetryPipeline {
  const random = opts.random ?? Math.random
  let active: Active | null = null
  let filtered = 0
  const retired = new Set<Promise<void>>()

  const retire = (old: Active | null) => {
    if (!old?.provider) return
    const p = old.provider.shutdown().catch((err) => opts.logger.warn({err}, 'telemetry: flushing the previous configuration failed'))
    const done = p.then(() => void retired.delete(done))
    retired.add(done)
  }

  return {
    emit(event, eo = {}) {
      const a = active
      if (!a?.tracer) return
      try {
        const kept = filterEvent(event, eo.filter ?? a.config.filter, {debug: opts.debug, random, reported: eo.reported})
        if (!kept) {
          filtered++
          return
        }
        const span = a.tracer.startSpan(kept.type, {kind: SpanKind.INTERNAL, startTime: kept.time, attributes: kept.attributes as Attributes}, ROOT_CONTEXT)
        span.end(kept.time)
      } catch (err) {
        opts.logger.warn({err, type: event.type}, 'telemetry: event not recorded')
      }
    },

    async configure(config) {
      if (active && isDeepStrictEqual(active.config, config)) return
      const exporters = await sinksFor(config, opts)
      const sinks: Active['sinks'] = {}
      for (const [name, exporter] of Object.entries(exporters) as Array<[SinkName, SpanExporter]>) {
        const delayMs = name === 'hub' ? config.hub.reportIntervalMs : config.cloud.batch.timeoutMs
        // Four batches wait at most (the SDK's 2048 for 512): past that the oldest are dropped.
        sinks[name] = new DropOldestBatchProcessor(exporter, {maxBatch: config.cloud.batch.maxSize, delayMs, maxQueue: 4 * config.cloud.batch.maxSize})
      }
      const processors = Object.values(sinks)
      const provider = processors.length
        ? new BasicTracerProvider({resource: resourceFromAttributes({'service.name': opts.service, ...config.resource}), spanProcessors: processors})
        : null
      const old = active
      active = {config, provider, tracer: provider?.getTracer('svc') ?? null, sinks}
      retire(old)
      opts.logger.info({enabled: config.enabled, sinks: Object.keys(sinks)}, 'telemetry configured')
    },

    config: () => active?.config ?? null,

    async flush() {
      await Promise.all([...retired])
      await active?.provider?.forceFlush()
    },

    stats() {
      const sinks: PipelineStats['sinks'] = {}
      for (const [name, p] of Object.entries(active?.sinks ?? {})) sinks[name as SinkName] = {...p.stats}
      return {filtered, sinks}
    },

    /** Stops recording and exports what is queued, giving up after `shutdownTimeoutMs` (a dead collector must not hold a Hub's exit). */
    async shutdown() {
      const old = active
      active = null
      retire(old)
      let timer: NodeJS.Timeout | undefined
      const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.shutdownTimeoutMs ?? 5000)))
      await Promise.race([Promise.all([...retired]), cap])
      clearTimeout(timer)
    },
  }
}
