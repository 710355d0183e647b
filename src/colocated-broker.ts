import {join} from 'node:path'
import type {Logger} from 'pino'
import {Broker} from './broker/broker.js'
import {buildLocalApi} from './broker/local-api.js'
import {selectRuntime, type RuntimeSelectionSettings} from './broker/runtimes/select.js'
import {paths} from './config/paths.js'
import type {Services} from './domain/services.js'

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
  /** `active_profile`, `runtimes` and `profiles` from the Hub's settings. */
  runtimeSettings: RuntimeSelectionSettings
}): Promise<RunningBroker> {
  const {brokerId, secret} = await opts.services.brokers.colocatedIdentity(opts.createdBy)
  opts.services.setColocatedBroker(brokerId)
  const stateDir = join(paths(opts.env).home, 'broker')
  const logger = opts.logger.child({svc: 'broker', brokerId})
  const selected = await selectRuntime(opts.runtimeSettings, {stateDir: join(stateDir, 'logs'), env: opts.env})
  logger.info({runtime: selected.runtimeName, profile: selected.profileName}, 'co-located broker runtime')
  const broker = new Broker({hubUrl: opts.hubUrl, brokerId, secret, stateDir, runtime: selected.runtime, runtimeEnv: selected.env, logger})
  const connected = new Promise<void>((resolve) => (broker.tunnel.onConnected = resolve))
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
      broker.stop()
      await api.close()
    },
  }
}
