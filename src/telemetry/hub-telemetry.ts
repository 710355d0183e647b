import type {Logger} from 'pino'
import {AppError} from '../api/app-error.js'
import type {CallContext} from '../domain/authz/context.js'
import type {Mode} from '../config/bootstrap.js'
import type {DomainEvent} from '../domain/deps.js'
import {mergeTelemetry, toTelemetryConfig, type FilterConfig} from './config.js'
import type {TelemetryEvent} from './filter.js'
import {createTelemetryPipeline, type PipelineOptions, type TelemetryPipeline} from './pipeline.js'
import {sanitizeReported} from './reported.js'

type Tree = Record<string, unknown>
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

/** What the Hub's telemetry reads of the settings service (Layer-1 `telemetry` section). */
export interface TelemetrySettingsSource {
  resolved(): Tree
  onChange(fn: () => void): () => void
}

export interface HubTelemetryOptions {
  settings: TelemetrySettingsSource
  mode: Mode
  logger: Logger
  /** The Hub runs with `--debug` (or log level debug/trace). */
  debug: boolean
  /** An agent's stored telemetry override (template file and create request); null for none. */
  agentOverride: (agentId: string) => Promise<Tree | null>
  now?: () => number
  pipeline?: Partial<PipelineOptions>
}

/** Agents whose override is cached; past it the cache starts over (a lookup is one read). */
const MAX_CACHED_AGENTS = 10_000

/**
 * The Hub's telemetry: one pipeline configured from the `telemetry` settings section and
 * reconfigured when a save changes it (here, or on another replica through the settings event).
 * Events come from the domain (agent status reports and lifecycle), from brokers over their
 * tunnel and from agents over HTTP (hub reporting). Nothing here is awaited on a request path.
 */
export function createHubTelemetry(o: HubTelemetryOptions) {
  const pipeline: TelemetryPipeline = createTelemetryPipeline({service: 'svc-hub', debug: o.debug, logger: o.logger, ...o.pipeline})
  const now = o.now ?? Date.now
  let hubTree: Tree = {}
  /** Agent -> its filter when it has an override (null: the Hub's own). */
  const filters = new Map<string, FilterConfig | null>()
  const trees = new Map<string, Tree | null>()
  /** Override lookups in flight: their events are recorded when they finish. */
  const lookups = new Set<Promise<void>>()

  /** The Layer-1 section as resolved (database over bootstrap, which carries the variables). */
  const currentTree = (): Tree => {
    const stored = o.settings.resolved().telemetry
    return isObj(stored) ? stored : {}
  }

  let applying: Promise<void> = Promise.resolve()
  const apply = () =>
    (applying = applying
      .then(async () => {
        hubTree = currentTree()
        filters.clear()
        await pipeline.configure(toTelemetryConfig(hubTree, {hosted: o.mode === 'hosted'}))
      })
      .catch((err) => o.logger.warn({err}, 'telemetry: configuration not applied')))

  const filterOf = (tree: Tree | null): FilterConfig | null => (tree ? toTelemetryConfig(mergeTelemetry(hubTree, tree)).filter : null)

  /** Emits an agent's event with that agent's filter; looks the override up once, off the caller's path. */
  function agentEmit(agentId: string, e: TelemetryEvent) {
    // Set last: a reporting agent cannot claim another agent's events.
    const event = {...e, attributes: {...e.attributes, 'agent.id': agentId}}
    const cached = filters.get(agentId)
    if (cached !== undefined) return pipeline.emit(event, {filter: cached ?? undefined})
    const known = trees.get(agentId)
    if (known !== undefined) {
      if (filters.size >= MAX_CACHED_AGENTS) filters.clear()
      filters.set(agentId, filterOf(known))
      return agentEmit(agentId, e)
    }
    const lookup = o
      .agentOverride(agentId)
      .catch(() => null)
      .then((tree) => {
        if (trees.size >= MAX_CACHED_AGENTS) trees.clear()
        trees.set(agentId, tree)
        agentEmit(agentId, e)
      })
      .catch((err) => o.logger.warn({err}, 'telemetry: agent event not recorded'))
      .finally(() => lookups.delete(lookup))
    lookups.add(lookup)
  }

  /** Hub reporting is on in hosted mode, else as `telemetry.hub.enabled` says. */
  const accepting = () => pipeline.config()?.hub.enabled === true

  return {
    pipeline,
    async start() {
      o.settings.onChange(() => void apply())
      await apply()
    },
    /** The domain's events (Deps.telemetry). */
    emit(e: DomainEvent) {
      if (!pipeline.config()?.enabled) return
      const event = {type: e.type, time: now(), attributes: e.attributes}
      if (e.agentId) agentEmit(e.agentId, event)
      else pipeline.emit(event)
    },
    /** A broker's report over its tunnel: events its own filter already passed. */
    fromBroker(brokerId: string, data: unknown) {
      if (!pipeline.config()?.enabled || !accepting()) return 0
      const events = sanitizeReported(isObj(data) ? data.events : undefined, now())
      for (const e of events) pipeline.emit({...e, attributes: {...e.attributes, 'broker.id': brokerId}}, {reported: true})
      return events.length
    },
    /**
     * An agent's report over HTTP: raw events, filtered here with the agent's filter. Only the
     * agent itself reports its events (403 `forbidden` for anyone else). Returns how many were
     * accepted: 0 while telemetry or hub reporting is off.
     */
    fromAgent(ctx: CallContext, agentId: string, raw: unknown): number {
      if (ctx.principal.kind !== 'agent' || ctx.principal.id !== agentId) throw new AppError('forbidden', 'only the agent itself reports its telemetry')
      if (!pipeline.config()?.enabled || !accepting()) return 0
      const events = sanitizeReported(raw, now())
      for (const e of events) agentEmit(agentId, e)
      return events.length
    },
    /** Applies a pending configuration, records events waiting on an override lookup, then exports everything queued (tests). */
    async flush() {
      await applying
      while (lookups.size) await Promise.all([...lookups])
      await pipeline.flush()
    },
    async close() {
      await applying
      await Promise.all([...lookups])
      await pipeline.shutdown()
    },
  }
}

export type HubTelemetry = ReturnType<typeof createHubTelemetry>
