import type {FastifyInstance} from 'fastify'
import pino, {type Logger} from 'pino'
import type {Bootstrap} from './config/bootstrap.js'
import {paths} from './config/paths.js'
import {ensureDevToken} from './domain/auth/dev-credential.js'
import type {Deps} from './domain/deps.js'
import type {HubConfig} from './domain/hub-config.js'
import {createServices} from './domain/services.js'
import {parseDuration, systemClock, type Clock} from './domain/shared/clock.js'
import {buildApp} from './server/app.js'
import {openStore, type Store} from './store/store.js'

export interface Hub {
  app: FastifyInstance
  store: Store
  config: HubConfig
  logger: Logger
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>
}

export interface HubOptions {
  env?: NodeJS.ProcessEnv
  clock?: Clock
  logger?: Logger
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
    sessionTtlMs: parseDuration(String(v['server.auth.session_ttl'])) ?? 30 * 86_400_000,
    publicUrl: String(v['server.hub.public_url'] || `http://${v['server.hub.host'] === '0.0.0.0' ? '127.0.0.1' : v['server.hub.host']}:${v['server.hub.port']}`),
    oidc: oidcIssuer
      ? {
          issuerUrl: oidcIssuer,
          clientId: String(v['server.auth.oidc.client_id'] ?? ''),
          clientSecret: String(v['server.auth.oidc.client_secret'] ?? ''),
          scopes: (v['server.auth.oidc.scopes'] as string[]) ?? ['openid', 'email', 'profile'],
        }
      : null,
  }
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
    const {applied} = await store.migrate()
    if (applied.length) logger.info({applied}, 'database migrated')
    const deps: Deps = {store, clock: opts.clock ?? systemClock, logger, config}
    const services = createServices(deps)
    if (devMode) await services.users.ensureDevUser()
    await services.users.promoteConfiguredAdmins()
    const app = await buildApp({services, logger})
    return {
      app,
      store,
      config,
      logger,
      close: async () => {
        await app.close()
        await store.close()
      },
    }
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
  return url
}
