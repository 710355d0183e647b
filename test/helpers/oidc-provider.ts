import {generateKeyPairSync, randomBytes} from 'node:crypto'
import http from 'node:http'
import type {AddressInfo} from 'node:net'

export interface TestAccount {
  email: string
  name?: string
  /** false: the provider says the address is not verified. */
  emailVerified?: boolean
}

/** Default accounts: the login name typed in the provider's form is the key. */
export const ACCOUNTS: Record<string, TestAccount> = {
  alice: {email: 'alice@example.com', name: 'Alice Example'},
  bob: {email: 'bob@other.test', name: 'Bob Other'},
  root: {email: 'root@example.com', name: 'Root Admin'},
  carol: {email: 'carol@example.com', name: 'Carol Example'},
  mallory: {email: 'mallory@example.com', name: 'Mallory', emailVerified: false},
}

export interface TestProvider {
  issuer: string
  clientId: string
  clientSecret: string
  /** SVC_SERVER_AUTH_OIDC_* variables that point a Hub at this provider. */
  hubEnv(): Record<string, string>
  close(): Promise<void>
}

export interface ProviderOptions {
  /** Redirect URIs of the Hub(s) under test (`${publicUrl}/api/v1/auth/callback`). */
  redirectUris: string[]
  accounts?: Record<string, TestAccount>
  /** Listen on this port (default: any free loopback port). */
  port?: number
  /** The client's secret (default: random). */
  clientSecret?: string
}

/**
 * A real OpenID provider (`oidc-provider`) on a loopback port: one confidential client with the
 * given redirect URIs, PKCE required, device flow on, the dev login/consent pages (any password),
 * and accounts whose ID tokens carry `email`, `email_verified` and `name`.
 */
export async function startOidcProvider(opts: ProviderOptions): Promise<TestProvider> {
  // Imported lazily: the module prints a Node 20 "unsupported runtime" notice when loaded.
  const {default: Provider} = await import('oidc-provider')
  const accounts = opts.accounts ?? ACCOUNTS
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const clientId = 'svc-hub'
  const clientSecret = opts.clientSecret ?? randomBytes(16).toString('hex')
  const jwk = generateKeyPairSync('ec', {namedCurve: 'P-256'}).privateKey.export({format: 'jwk'})

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: opts.redirectUris,
        grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: {keys: [{...jwk, alg: 'ES256', use: 'sig', kid: 'test'}]},
    cookies: {keys: [randomBytes(16).toString('hex')]},
    claims: {openid: ['sub'], email: ['email', 'email_verified'], profile: ['name']},
    // Put the scope-granted claims (email) in the ID token, as many real providers do.
    conformIdTokenClaims: false,
    pkce: {required: () => true},
    // Explicit lifetimes (the defaults print a notice each time they are used).
    ttl: {AccessToken: 3600, AuthorizationCode: 60, DeviceCode: 600, Grant: 3600, IdToken: 3600, Interaction: 3600, Session: 3600},
    features: {devInteractions: {enabled: true}, deviceFlow: {enabled: true}},
    async findAccount(_ctx: unknown, id: string) {
      const a = accounts[id]
      if (!a) return undefined
      return {
        accountId: id,
        claims: async () => ({sub: id, email: a.email, email_verified: a.emailVerified ?? true, name: a.name ?? id}),
      }
    },
  } as never)
  server.on('request', provider.callback())

  return {
    issuer,
    clientId,
    clientSecret,
    hubEnv: () => ({
      SVC_SERVER_AUTH_OIDC_ISSUERURL: issuer,
      SVC_SERVER_AUTH_OIDC_CLIENTID: clientId,
      SVC_SERVER_AUTH_OIDC_CLIENTSECRET: clientSecret,
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
