import {join} from 'node:path'
import type {Logger} from 'pino'
import {Broker} from './broker/broker.js'
import {buildLocalApi} from './broker/local-api.js'
import {chooseDefaultRuntime} from './broker/runtimes/default-runtime.js'
import {createRuntime, defaultRuntime, runtimeNamed, runtimeNames, selectRuntime, type RuntimeSelectionSettings} from './broker/runtimes/select.js'
import {paths} from './config/paths.js'
import type {Services} from './domain/services.js'
import {createBrokerTelemetry, reportOverTunnel, type BrokerTelemetry} from './telemetry/broker-telemetry.js'

/** Only what selects the runtime, so unrelated saves do not rebuild it. */
const selectionOf = (s: RuntimeSelectionSettings): RuntimeSelectionSettings => ({active_profile: s.active_profile, runtimes: s.runtimes, profiles: s.profiles})

export interface RunningBroker {
  broker: Broker
  localUrl: string | null
  stop(): Promise<void>
}

/**
 * Starts the Hub's co-located runtime broker in this process. It connects to the Hub through the
 * same tunnel as any other broker (over loopback), with an identity kept in the Hub's database,
 * so it survives restarts; its local API listens on `server.broker.host:port`.
 */
export async function startColocatedBroker(opts: {
  services: Services
  hubUrl: string
  host: string
  port: number
  env: NodeJS.ProcessEnv
  logger: Logger
  createdBy: string
  /**
   * `active_profile`, `runtimes` and `profiles` as the Hub resolves them now: `runtimes` and
   * `profiles` are Layer-1 sections, so this is the database value over the bootstrap merge.
   */
  runtimeSettings: () => RuntimeSelectionSettings
  /** Subscribes to settings changes (a save here or on a replica); returns an unsubscribe. */
  onSettingsChange?: (fn: () => void) => () => void
  /** The process runs in debug mode (telemetry `filter.respect_debug_mode`). */
  debug?: boolean
  /** Setting `server.broker.runtime`: the default runtime, over the one chosen at the first start. */
  defaultRuntime?: string
}): Promise<RunningBroker> {
  const {brokerId, secret} = await opts.services.brokers.colocatedIdentity(opts.createdBy)
  opts.services.setColocatedBroker(brokerId)
  // Save rule 5: the settings show the identity the Hub gave its broker. A file that cannot be
  // written must not stop the Hub: the database keeps the identity either way.
  await opts.services.settings?.recordColocatedBroker(brokerId, secret).catch((err: Error) => opts.logger.warn({err: err.message}, 'could not record the co-located broker in the settings file'))
  const stateDir = join(paths(opts.env).home, 'broker')
  const logger = opts.logger.child({svc: 'broker', brokerId})
  const baseOpts = {stateDir: join(stateDir, 'logs'), env: opts.env}
  const selection = () => selectionOf(opts.runtimeSettings())
  // Chosen once (first start) and kept in <stateDir>/runtime.json; a setting overrides it.
  const choice = await chooseDefaultRuntime(stateDir, {pinned: opts.defaultRuntime, known: runtimeNames(selection()), detect: async () => (await defaultRuntime(baseOpts)).type})
  const runtimeOpts = {...baseOpts, defaultRuntime: choice.runtime}
  let applied = JSON.stringify(selection())
  // `runtimes` and `profiles` can be saved through the API: an unusable saved selection must not
  // stop the Hub from starting (the admin fixes it through that same API), so fall back to the
  // default runtime as a bare type.
  const selected = await selectRuntime(selection(), runtimeOpts).catch(async (err: Error) => {
    opts.logger.error({err: err.message}, 'the runtime settings are not usable; the co-located broker starts on the default runtime')
    return runtimeNamed({}, choice.runtime, runtimeOpts)
  })
  logger.info({runtime: selected.runtimeName, profile: selected.profileName, defaultRuntime: choice.runtime, defaultFrom: choice.source, chosenAt: choice.chosenAt}, `co-located broker runtime: ${selected.runtimeName} (default ${choice.runtime}, ${choice.source === 'setting' ? 'from server.broker.runtime' : `chosen at first start ${choice.chosenAt}`})`)
  let telemetry: BrokerTelemetry | null = null
  const broker = new Broker({
    hubUrl: opts.hubUrl,
    brokerId,
    secret,
    stateDir,
    runtime: selected.runtime,
    runtimeEnv: selected.env,
    runtimeName: selected.runtimeName,
    runtimeSettings: selected.settings,
    createRuntime: (name, settings) => createRuntime(name, settings, runtimeOpts),
    resolveRuntime: (name) => runtimeNamed(selection(), name, runtimeOpts),
    logger,
    telemetry: (type, attributes) => telemetry?.emit(type, attributes),
  })
  // Its events are reported over its tunnel like any broker's, under the Hub's `telemetry` section.
  telemetry = createBrokerTelemetry({
    send: reportOverTunnel(broker),
    tree: () => opts.services.settings?.resolved().telemetry,
    onChange: opts.onSettingsChange,
    logger,
    debug: opts.debug === true,
    colocated: true,
  })
  await telemetry.start()
  // A save of `runtimes` or `profiles` reaches agents started afterwards; running ones stay put.
  // Changes are applied one at a time, in order; an unusable selection keeps the current runtime.
  let switching = Promise.resolve()
  const follow = () => {
    switching = switching.then(async () => {
      const next = selection()
      const text = JSON.stringify(next)
      if (text === applied) return
      applied = text
      try {
        const s = await selectRuntime(next, runtimeOpts)
        broker.setRuntime(s.runtime, s.env, s.runtimeName, s.settings)
        logger.info({runtime: s.runtimeName, profile: s.profileName}, 'co-located broker runtime changed by a settings save')
      } catch (err) {
        logger.warn({err: (err as Error).message}, 'the saved runtime settings are not usable; the co-located broker keeps its current runtime')
      }
    })
  }
  const unsubscribe = opts.onSettingsChange?.(follow) ?? (() => {})
  const connected = new Promise<void>((resolve) => broker.tunnel.onConnected(resolve))
  broker.start()
  let localUrl: string | null = null
  const api = await buildLocalApi(broker, logger)
  try {
    localUrl = await api.listen({host: opts.host, port: opts.port})
  } catch (err) {
    // The tunnel is what the Hub uses; a busy local port must not stop the Hub.
    logger.warn({err: (err as Error).message, port: opts.port}, 'broker local API could not listen; continuing without it')
  }
  // Wait briefly for the tunnel so the first `agent create` after start-up finds the broker.
  await Promise.race([connected, new Promise((r) => setTimeout(r, 5000).unref())])
  return {
    broker,
    localUrl,
    stop: async () => {
      unsubscribe()
      await switching
      await telemetry?.close()
      broker.stop()
      await api.close()
    },
  }
}
