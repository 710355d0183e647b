import {runDelegationStartup} from './domain/delegation/startup.js'
import type {StartupAdoptionHooks} from './domain/delegation/startup-adoption.js'
import type {FastifyInstance} from 'fastify'
import pino, {type Logger} from 'pino'
import {createBlobStore, type BlobStore} from './blobs/index.js'
import {BootstrapError, type Bootstrap} from './config/bootstrap.js'
import {paths} from './config/paths.js'
import {createArtifactsService} from './domain/artifacts/artifacts-service.js'
import {ensureDevToken} from './domain/auth/dev-credential.js'
import type {Deps} from './domain/deps.js'
import type {HubConfig} from './domain/hub-config.js'
import {createServices} from './domain/services.js'
import {parseDuration, systemClock, type Clock} from './domain/shared/clock.js'
import {buildApp} from './server/app.js'
import {sweepStorageOrphans} from './domain/artifacts/orphan-sweep.js'
import type {HttpLimits} from './server/http-limits.js'
import {artifactPageRoutes} from './server/routes/artifact-page.js'
import {artifactRoutes} from './server/routes/artifacts.js'
import {openStore, type Store} from './store/store.js'
import {createSettingsService} from './domain/settings/settings-service.js'
import {adminSettingsRoutes} from './server/routes/admin-settings.js'
import {hubNameOf} from './domain/settings/hub-name.js'
import {eventRoutes} from './server/routes/events.js'
import {approvalRoutes} from './server/routes/approvals.js'
import {agentPortRoutes} from './server/routes/agent-ports.js'
import {channelsOf, createNotifier} from './domain/events/notifications.js'
import {delegationAdoptionRoutes} from './server/routes/delegation-adoption.js'
import {createAdoptionService} from './domain/delegation/adoption-service.js'
import {createWebSignIn} from './domain/auth/web-sign-in.js'
import {webRoutes} from './server/routes/web.js'
import {createSecretsService} from './domain/secrets/secrets-service.js'
import {loadSecretsKey} from './domain/secrets/sealing.js'
import {sealPlaintextBrokerSecrets} from './domain/brokers/broker-secrets.js'
import {secretRoutes} from './server/routes/secrets.js'
import {DEV_USER} from './domain/hub-config.js'
import type {Services} from './domain/services.js'
import {TunnelRegistry} from './server/tunnel/tunnel-registry.js'
import {createReplicas, type Replicas} from './server/replicas/replicas.js'
import {createBrokerEvents} from './domain/brokers/broker-events.js'
import {createHubTelemetry, type HubTelemetry} from './telemetry/hub-telemetry.js'
import {withTelemetryEnv} from './telemetry/config.js'
import {telemetryRoutes} from './server/routes/telemetry.js'
import {startColocatedBroker, type RunningBroker} from './colocated-broker.js'
import {removeHubRecord, writeHubRecord} from './config/hub-record.js'

export interface Hub {
  app: FastifyInstance
  store: Store
  config: HubConfig
  logger: Logger
  /** Artifact storage; null when `server.storage.provider` is `none` (or s3 without a bucket). */
  blobs: BlobStore | null
  services: Services
  tunnels: TunnelRegistry
  /** The replica directory and forwarding: any replica serves any agent (PostgreSQL). */
  replicas: Replicas
  env: NodeJS.ProcessEnv
  /** Telemetry export (the `telemetry` settings section, followed on every save). */
  telemetry: HubTelemetry
  /** The co-located broker, once `listenHub` started it. */
  colocated: RunningBroker | null
  /** Stops the co-located broker and accepting, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>
}

export interface HubOptions {
  env?: NodeJS.ProcessEnv
  clock?: Clock
  logger?: Logger
  /** Schedules the settings poll backstop (default every 60 s); tests drive it by hand. */
  settingsPoll?: (tick: () => Promise<void>) => () => void
  /** Failure injection into the start-up provenance adoption (tests): snapshot and hop writes. */
  delegationStartup?: StartupAdoptionHooks
  /** HTTP timeouts and caps (tests give short ones); DEFAULT_HTTP_LIMITS otherwise. */
  limits?: Partial<HttpLimits>
}

/** `server.auth.session_ttl` as milliseconds; a value that is not a duration stops start-up. */
function sessionTtl(text: string): number {
  const ms = parseDuration(text)
  if (ms === null || ms < 60_000) throw new BootstrapError(`invalid server.auth.session_ttl "${text}": expected a duration of at least 1m, such as 12h or 720h`)
  return ms
}

/** `server.retention.deleted_agent_logs` as milliseconds; a value that is not a duration stops start-up. */
function deletedLogRetention(text: string): number {
  const ms = parseDuration(text)
  if (ms === null) throw new BootstrapError(`invalid server.retention.deleted_agent_logs "${text}": expected a duration such as 12h or 7d`)
  return ms
}

/** What the domain needs, read off the bootstrap configuration. */
export function hubConfigFrom(b: Bootstrap, devToken: string | null): HubConfig {
  const v = b.values
  const oidcIssuer = String(v['server.auth.oidc.issuer_url'] ?? '')
  return {
    mode: b.mode,
    devMode: v['server.auth.dev_mode'] === true,
    devToken,
    adminEmails: (v['server.hub.admin_emails'] as string[]) ?? [],
    userAccessMode: String(v['server.auth.user_access_mode'] ?? 'open'),
    authorizedDomains: (v['server.auth.authorized_domains'] as string[]) ?? [],
    sessionTtlMs: sessionTtl(String(v['server.auth.session_ttl'])),
    publicUrl: String(v['server.hub.public_url'] || `http://${v['server.hub.host'] === '0.0.0.0' ? '127.0.0.1' : v['server.hub.host']}:${v['server.hub.port']}`),
    oidc: oidcIssuer
      ? {
          issuerUrl: oidcIssuer,
          clientId: String(v['server.auth.oidc.client_id'] ?? ''),
          clientSecret: String(v['server.auth.oidc.client_secret'] ?? ''),
          scopes: (v['server.auth.oidc.scopes'] as string[]) ?? ['openid', 'email', 'profile'],
        }
      : null,
    artifactMaxFileBytes: Number(v['artifacts.max_file_bytes'] ?? 32 * 1024 * 1024),
    deletedAgentLogsRetentionMs: deletedLogRetention(String(v['server.retention.deleted_agent_logs'] ?? '7d')),
  }
}

/** The blob store of `server.storage.*` (null: no artifact storage on this Hub). */
export function blobStoreFrom(b: Bootstrap, env: NodeJS.ProcessEnv): Promise<BlobStore | null> {
  const v = b.values
  const str = (k: string) => String(v[`server.storage.${k}`] ?? '')
  return createBlobStore({
    provider: str('provider'),
    path: str('path') || paths(env).storage,
    endpoint: str('endpoint'),
    bucket: str('bucket'),
    region: str('region'),
    accessKeyId: str('access_key_id'),
    secretAccessKey: str('secret_access_key'),
    forcePathStyle: v['server.storage.force_path_style'] as boolean | undefined,
  })
}

/**
 * The one composition root: configuration -> database -> migrations -> services -> app.
 * It does not listen; `listenHub` does.
 */
export async function createHub(bootstrap: Bootstrap, opts: HubOptions = {}): Promise<Hub> {
  const env = opts.env ?? process.env
  const logger = opts.logger ?? pino({level: bootstrap.logLevel, base: {svc: 'hub'}})
  for (const w of bootstrap.warnings) logger.warn(w)
  const v = bootstrap.values
  const devMode = v['server.auth.dev_mode'] === true
  const devToken = devMode ? ensureDevToken(paths(env).devToken) : null
  const config = hubConfigFrom(bootstrap, devToken)

  const store = await openStore({driver: v['server.database.driver'] as 'sqlite' | 'postgres', url: String(v['server.database.url'])})
  try {
    const clock = opts.clock ?? systemClock
    // Secret values and broker secrets are sealed with SVC_SECRETS_KEY or ~/.svc/secrets.key (read on first use).
    let key: Buffer | null = null
    const secretsKey = () => (key ??= loadSecretsKey(env, `${paths(env).home}/secrets.key`))
    const {applied} = await store.migrate({
      afterSchema: async () => {
        await runDelegationStartup(store, clock, logger, opts.delegationStartup)
        // Fails start-up when it fails: a plaintext secret left behind would no longer verify.
        await sealPlaintextBrokerSecrets(store, secretsKey, logger)
      },
    })
    if (applied.length) logger.info({applied}, 'database migrated')
    const deps: Deps = {store, clock, logger, config}
    const tunnels = new TunnelRegistry()
    const replicas = createReplicas({replicas: store.replicas, clock, logger, tunnels, secretsKey})
    // Layer-1 settings from the database over the bootstrap merge; agents read this cached view.
    // SVC_TELEMETRY_* and SVC_OTEL_* override the settings file: part of the telemetry section's seed.
    const settings = createSettingsService({...deps, bootstrap: withTelemetryEnv(bootstrap, env, (m) => logger.warn(m)), env, setLogLevel: (level) => (logger.level = level), schedulePoll: opts.settingsPoll})
    await settings.init()
    // Layer-1 keys the domain reads off HubConfig follow the database view (at once, and on replicas).
    const bootPublicUrl = config.publicUrl
    const followSettings = () => {
      const t = settings.resolved() as {server?: {hub?: Record<string, unknown>; auth?: Record<string, unknown>}}
      const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter(Boolean) : [])
      config.adminEmails = list(t.server?.hub?.admin_emails)
      config.userAccessMode = String(t.server?.auth?.user_access_mode ?? 'open')
      config.authorizedDomains = list(t.server?.auth?.authorized_domains)
      config.publicUrl = typeof t.server?.hub?.public_url === 'string' && t.server.hub.public_url ? t.server.hub.public_url : bootPublicUrl
    }
    followSettings()
    settings.onChange(followSettings)
    // Telemetry follows the Layer-1 `telemetry` section too; the domain records events through deps.
    const telemetry = createHubTelemetry({
      settings,
      mode: bootstrap.mode,
      logger,
      debug: ['debug', 'trace'].includes(bootstrap.logLevel),
      agentOverride: async (id) => ((await store.agents.get(id))?.config.telemetry as Record<string, unknown> | undefined) ?? null,
    })
    await telemetry.start()
    deps.telemetry = telemetry.emit
    const services = createServices(deps, {gateway: replicas.gateway, agentSettings: async () => settings.agentSettings(), settings, secretsKey})
    // Agent events: this replica's feed of the log, the SSE route, and webhook notifications.
    await services.agentFeed.start()
    const heartbeatMs = Number(env.SVC_EVENTS_HEARTBEAT_MS) || undefined
    services.routePlugins.push(eventRoutes(services.events, {heartbeatMs, hub: () => ({name: hubNameOf(settings.resolved()), url: config.publicUrl ?? ''})}))
    services.routePlugins.push(approvalRoutes(services.approvals))
    services.routePlugins.push(agentPortRoutes(services.ports, services.authenticate))
    const notifier = createNotifier(deps, services.agentFeed, {
      channels: () => channelsOf(settings.resolved()),
      hub: () => ({name: hubNameOf(settings.resolved()), url: config.publicUrl ?? ''}),
    })
    notifier.start()
    services.routePlugins.push(adminSettingsRoutes(settings, {notifications: () => notifier.status()}))
    services.routePlugins.push(delegationAdoptionRoutes(createAdoptionService(deps)))
    const secrets = createSecretsService(deps, {
      key: secretsKey,
      userScopeOnly: () => (settings.resolved() as {agent_secrets?: {user_scope_only?: unknown}}).agent_secrets?.user_scope_only === true,
    })
    services.routePlugins.push(secretRoutes(secrets))
    services.agents.useSecrets((projectId, userId, keys) => secrets.valuesFor(projectId, userId, keys))
    const blobs = await blobStoreFrom(bootstrap, env)
    if (!blobs) logger.warn({provider: v['server.storage.provider']}, 'no artifact storage configured: artifact routes answer 503')
    else await sweepStorageOrphans(store, blobs, logger, clock.now()).catch((err) => logger.warn({err}, 'the storage clean-up at start failed; continuing'))
    const artifacts = createArtifactsService({...deps, blobs, maxFileBytes: config.artifactMaxFileBytes})
    services.routePlugins.push(artifactRoutes(artifacts), artifactPageRoutes(artifacts))
    // The web client; a browser signs in with a one-time link of `svc web` (or OpenID Connect).
    services.routePlugins.push(
      webRoutes({
        webSignIn: createWebSignIn(deps, services.sessions),
        mode: bootstrap.mode,
        secureCookies: services.signIn.secureCookies,
        assets: async () => (await import('./server/web/assets.js')).loadWebAssets(),
      }),
    )
    if (devMode) {
      await services.users.ensureDevUser()
      if (bootstrap.mode === 'workstation') await services.projects.ensureDefault(DEV_USER.id)
    }
    await services.users.promoteConfiguredAdmins()
    services.routePlugins.push(telemetryRoutes(telemetry))
    const brokerEvents = createBrokerEvents({brokers: services.brokers, agents: services.agents, logger, telemetry})
    tunnels.onEvent = brokerEvents.onEvent
    tunnels.onDisconnect = brokerEvents.onDisconnect
    services.routePlugins.push(replicas.routes)
    const app = await buildApp({services, logger, tunnels, limits: opts.limits})
    // Scheduled and recurring messages: claimed atomically, so replicas never fire one twice.
    const scheduler = setInterval(() => void services.messages.runDue().catch((err) => logger.warn({err}, 'scheduled messages failed')), 1000)
    scheduler.unref()
    // Broker leases: renewed for the brokers held here, lapsed ones (a crashed replica's) made offline.
    services.brokers.liveness.start()
    const hub: Hub = {
      app,
      store,
      config,
      logger,
      blobs,
      services,
      tunnels,
      replicas,
      env,
      telemetry,
      colocated: null,
      close: async () => {
        removeHubRecord(env)
        clearInterval(scheduler)
        await services.brokers.liveness.stop()
        await notifier.close()
        await hub.colocated?.stop()
        tunnels.closeAll()
        await replicas.close()
        await app.close()
        await services.close()
        await telemetry.close()
        await settings.close()
        await store.close()
      },
    }
    return hub
  } catch (err) {
    await store.close()
    throw err
  }
}

/** Listens on the configured host and port; returns the URL. */
export async function listenHub(hub: Hub, bootstrap: Bootstrap): Promise<string> {
  const host = String(bootstrap.values['server.hub.host'])
  const port = Number(bootstrap.values['server.hub.port'])
  await hub.app.listen({host, port})
  const addr = hub.app.server.address()
  const actualPort = typeof addr === 'object' && addr ? addr.port : port
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`
  hub.logger.info({url, mode: bootstrap.mode, driver: bootstrap.values['server.database.driver']}, 'hub listening')
  // The CLI finds a workstation Hub on any port through this record (removed by close()).
  if (bootstrap.mode === 'workstation') {
    try {
      writeHubRecord(url.replace('//0.0.0.0:', '//127.0.0.1:'), hub.env)
    } catch (err) {
      hub.logger.warn({err: (err as Error).message}, 'could not record the Hub URL for the CLI')
    }
  }
  if (bootstrap.values['server.broker.enabled'] === true) {
    let ready!: () => void
    hub.services.setColocatedStarting(new Promise<void>((r) => (ready = r)))
    try {
      await startAndAwaitColocated(hub, bootstrap, host, actualPort)
    } finally {
      ready()
    }
  }
  // Other replicas forward operations on this replica's brokers to it (on PostgreSQL, the one
  // engine replicas share): at SVC_REPLICA_URL, else the URL it listens on.
  if (hub.store.driver === 'postgres') await hub.replicas.start(hub.services.brokers.liveness.holder, hub.env.SVC_REPLICA_URL || url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:'))
  return url
}

/** Starts the co-located broker and waits (briefly) until the Hub has its hello. */
async function startAndAwaitColocated(hub: Hub, bootstrap: Bootstrap, host: string, actualPort: number) {
  const loopback = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${actualPort}`
  hub.colocated = await startColocatedBroker({
    services: hub.services,
    hubUrl: loopback,
    host: String(bootstrap.values['server.broker.host'] || '127.0.0.1'),
    port: Number(bootstrap.values['server.broker.port'] ?? 9800),
    env: hub.env,
    logger: hub.logger,
    createdBy: hub.config.devMode ? DEV_USER.id : 'system',
    // `runtimes` and `profiles` are Layer-1: the database view (over bootstrap), followed on every save.
    runtimeSettings: () => (hub.services.settings?.resolved() ?? bootstrap.tree) as never,
    onSettingsChange: hub.services.settings && ((fn) => hub.services.settings!.onChange(fn)),
    debug: ['debug', 'trace'].includes(bootstrap.logLevel),
    defaultRuntime: String(bootstrap.values['server.broker.runtime'] ?? ''),
  })
  // The broker's tunnel being open is not enough: the Hub dispatches only to a broker whose
  // hello it has read. Wait for that (briefly) so the first create after start-up finds it.
  const brokerId = hub.colocated.broker.opts.brokerId
  const deadline = Date.now() + 5000
  while (!hub.tunnels.isConnected(brokerId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
}
