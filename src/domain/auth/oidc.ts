import type {Configuration, TokenEndpointResponse, TokenEndpointResponseHelpers} from 'openid-client'
import {AppError} from '../../api/app-error.js'
import type {OidcIdentity} from '../users/users-service.js'
import type {Deps} from '../deps.js'

export type Tokens = TokenEndpointResponse & TokenEndpointResponseHelpers
type OpenIdClient = typeof import('openid-client')

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** An error answered by the provider (`error` of RFC 6749 section 5.2), or null. */
export function providerErrorOf(err: unknown): {error: string; description?: string} | null {
  const e = err as {error?: unknown; error_description?: unknown} | null
  return e && typeof e.error === 'string' ? {error: e.error, description: typeof e.error_description === 'string' ? e.error_description : undefined} : null
}

/** Any failure talking to the provider, as an `oidc_failed` (502) naming the provider's error. */
export function oidcFailed(err: unknown, doing: string): AppError {
  if (err instanceof AppError) return err
  const p = providerErrorOf(err)
  const why = p ? `${p.error}${p.description ? `: ${p.description}` : ''}` : (err as Error)?.message ?? String(err)
  return new AppError('oidc_failed', `the OpenID provider failed ${doing} (${why})`, p ? {providerError: p.error} : undefined)
}

/**
 * The Hub as an OpenID relying party. `openid-client` is imported on first use, so a CLI that
 * never signs anyone in never loads it; discovery is cached per process and retried after a
 * failure. Every method throws `oidc_unconfigured` (503) when `server.auth.oidc` is not set.
 */
export function createOidcClient(deps: Deps) {
  const {config, logger} = deps
  let cached: Promise<{oc: OpenIdClient; conf: Configuration}> | null = null

  function settings() {
    if (!config.oidc) throw new AppError('oidc_unconfigured', 'interactive sign-in is not configured on this Hub: set server.auth.oidc.issuer_url, client_id and client_secret')
    return config.oidc
  }

  async function discover(): Promise<{oc: OpenIdClient; conf: Configuration}> {
    const s = settings()
    const oc = await import('openid-client')
    const issuer = new URL(s.issuerUrl)
    // An http issuer is the operator's explicit choice (a test or private network provider).
    const insecure = issuer.protocol === 'http:'
    const auth = s.clientSecret ? oc.ClientSecretBasic(s.clientSecret) : oc.None()
    const conf = await oc.discovery(issuer, s.clientId, undefined, auth, insecure ? {execute: [oc.allowInsecureRequests]} : undefined)
    if (insecure && !['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname)) logger.warn({issuer: s.issuerUrl}, 'OpenID issuer is plain http')
    return {oc, conf}
  }

  async function client() {
    settings()
    cached ??= discover().catch((err) => {
      cached = null
      throw oidcFailed(err, 'discovery')
    })
    return cached
  }

  return {
    client,
    /** Throws `oidc_unconfigured` unless `server.auth.oidc` is set. */
    ensureConfigured: () => void settings(),
    /** The callback registered at the provider. */
    redirectUri: () => `${config.publicUrl.replace(/\/+$/, '')}/api/v1/auth/callback`,
    scope: () => settings().scopes.join(' '),

    /** The provider, or null when sign-in is not configured (a fact to show, not a failure). */
    async describe(): Promise<{issuer: string; deviceFlow: boolean} | null> {
      if (!config.oidc) return null
      const {conf} = await client()
      const m = conf.serverMetadata()
      return {issuer: m.issuer, deviceFlow: !!m.device_authorization_endpoint}
    },

    /**
     * The identity in a token response: the ID token's claims, completed from the userinfo
     * endpoint when the ID token carries no e-mail (providers that follow the core spec strictly).
     * An address the provider marks unverified is refused: accounts are linked by e-mail.
     */
    async identityOf(tokens: Tokens): Promise<OidcIdentity> {
      const {oc, conf} = await client()
      const claims = tokens.claims()
      if (!claims) throw new AppError('oidc_failed', 'the OpenID provider returned no ID token; is the openid scope requested?')
      let {email, name, email_verified: verified} = claims as {email?: unknown; name?: unknown; email_verified?: unknown}
      if (typeof email !== 'string' && tokens.access_token && conf.serverMetadata().userinfo_endpoint) {
        try {
          const info = await oc.fetchUserInfo(conf, tokens.access_token, claims.sub)
          ;({email, name, email_verified: verified} = info)
        } catch (err) {
          throw oidcFailed(err, 'the userinfo request')
        }
      }
      if (typeof email !== 'string' || !email.includes('@')) {
        throw new AppError('oidc_failed', 'the OpenID provider shared no e-mail address; request the email scope (server.auth.oidc.scopes)')
      }
      if (verified === false) throw new AppError('forbidden', `the OpenID provider says ${email} is not verified`)
      return {issuer: claims.iss, subject: claims.sub, email, ...(typeof name === 'string' && name && {name})}
    },
  }
}

export type OidcClient = ReturnType<typeof createOidcClient>
