import {join} from 'node:path'
import pino from 'pino'
import {AppError} from '../api/app-error.js'
import {HubClient} from '../client/hub-client.js'
import {agentsApi} from '../client/agents-client.js'
import {Broker} from './broker.js'
import {identityUrls, loadIdentity, saveIdentity, type BrokerIdentity} from './identity.js'
import {buildLocalApi} from './local-api.js'
import {chooseDefaultRuntime} from './runtimes/default-runtime.js'
import {createRuntime, defaultRuntime, RUNTIME_TYPES, runtimeNamed} from './runtimes/select.js'
import {loadSettings} from '../config/settings-loader.js'
import {createBrokerTelemetry, reportOverTunnel, type BrokerTelemetry} from '../telemetry/broker-telemetry.js'

export interface StandaloneOptions {
  /** Every URL of the deployment (its replicas, or one load-balanced URL), in order of preference. */
  hubUrls: string[]
  name: string
  stateDir: string
  host: string
  port: number
  runtime?: string
  joinToken?: string
  /** A user credential to register the broker with when it has no identity and no join token. */
  userToken?: string | null
  logLevel: string
}

const origins = (urls: string[]) => new Set(urls.map((u) => new URL(u).origin))

/**
 * Calls `fn` with each URL in turn until one answers: a replica that is down (no answer at all)
 * is skipped; an answer, even a refusal, ends the search (every replica would say the same).
 */
async function firstAnswering<T>(urls: string[], fn: (url: string) => Promise<T>): Promise<T> {
  let last: unknown
  for (const url of urls) {
    try {
      return await fn(url)
    } catch (err) {
      last = err
      if ((err as AppError).code !== 'hub_unreachable') throw err
    }
  }
  throw last
}

/**
 * Identity of a standalone broker: the stored one (valid on every replica of the deployment,
 * whichever URL it was made through); else join with a join token (given, or obtained by
 * registering with the user's own credential). Two phases either way. A join token given with a
 * stored identity made for other URLs only (another deployment) joins anew.
 */
async function identityFor(opts: StandaloneOptions): Promise<{id: BrokerIdentity; joined: boolean}> {
  const stored = loadIdentity(opts.stateDir)
  const given = origins(opts.hubUrls)
  if (stored && (!opts.joinToken || identityUrls(stored).some((u) => given.has(new URL(u).origin)))) {
    // The URLs given now are the ones to follow (recorded, so the identity file says where it was last used).
    const id = {...stored, hubUrl: opts.hubUrls[0], hubUrls: opts.hubUrls}
    if (identityUrls(stored).join(',') !== opts.hubUrls.join(',')) saveIdentity(opts.stateDir, id)
    return {id, joined: false}
  }
  let joinToken = opts.joinToken
  if (!joinToken) {
    if (!opts.userToken) throw new AppError('not_signed_in', 'this broker has not joined the Hub: pass --join-token (from `svc broker register`), or sign in so it can register itself')
    const userToken = opts.userToken
    joinToken = (await firstAnswering(opts.hubUrls, (url) => agentsApi(new HubClient(url, userToken)).registerBroker(opts.name))).joinToken
  }
  const token = joinToken
  const {brokerId, secret} = await firstAnswering(opts.hubUrls, (url) => agentsApi(new HubClient(url, null)).joinBroker(token))
  const id = {hubUrl: opts.hubUrls[0], hubUrls: opts.hubUrls, brokerId, secret}
  saveIdentity(opts.stateDir, id)
  return {id, joined: true}
}

/** Runs a standalone runtime broker until SIGINT or SIGTERM. */
export async function runStandaloneBroker(opts: StandaloneOptions, onReady: (info: {brokerId: string; localUrl: string | null; joined: boolean}) => void): Promise<void> {
  const logger = pino({level: opts.logLevel, base: {svc: 'broker'}}, pino.destination(2))
  const {id, joined} = await identityFor(opts)
  const runtimeOpts = {stateDir: join(opts.stateDir, 'logs')}
  // --runtime wins; else the runtime chosen at this broker's first start (kept in its state dir).
  const choice = await chooseDefaultRuntime(opts.stateDir, {pinned: opts.runtime, known: RUNTIME_TYPES, detect: async () => (await defaultRuntime(runtimeOpts)).type}).catch((err: Error) => {
    throw new AppError('usage_error', err.message)
  })
  const selected = runtimeNamed({}, choice.runtime, runtimeOpts)
  if (!(await selected.runtime.available())) throw new AppError('usage_error', `runtime ${selected.runtime.type} is not available on this host${choice.source === 'stored' ? ` (chosen at this broker's first start, ${choice.chosenAt}; pass --runtime to use another)` : ''}`)
  logger.info({runtime: choice.runtime, from: choice.source, chosenAt: choice.chosenAt}, 'broker runtime')
  let telemetry: BrokerTelemetry | null = null
  const broker = new Broker({hubUrl: opts.hubUrls[0], hubUrls: opts.hubUrls, brokerId: id.brokerId, secret: id.secret, stateDir: opts.stateDir, runtime: selected.runtime, runtimeEnv: selected.env, runtimeName: selected.runtimeName, runtimeSettings: selected.settings, createRuntime: (name, settings) => createRuntime(name, settings, runtimeOpts), logger: logger.child({brokerId: id.brokerId}), telemetry: (type, attributes) => telemetry?.emit(type, attributes)})
  // Telemetry settings of this host: global and project files merged, SVC_TELEMETRY_* / SVC_OTEL_* over them.
  const {tree} = await loadSettings()
  telemetry = createBrokerTelemetry({send: reportOverTunnel(broker), tree: () => tree.telemetry, logger, debug: opts.logLevel === 'debug' || opts.logLevel === 'trace'})
  await telemetry.start()
  broker.start()
  const api = await buildLocalApi(broker, logger)
  let localUrl: string | null = null
  try {
    localUrl = await api.listen({host: opts.host, port: opts.port})
  } catch (err) {
    logger.warn({err: (err as Error).message, port: opts.port}, 'local API could not listen; continuing without it')
  }
  onReady({brokerId: id.brokerId, localUrl, joined})
  await new Promise<void>((resolve) => {
    const stop = () => {
      // Queued telemetry goes out over the tunnel before it closes.
      const closed = (telemetry?.close() ?? Promise.resolve()).finally(() => broker.stop())
      void Promise.all([closed, api.close()]).then(() => resolve(), () => resolve())
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}
