import {AppError} from '../../api/app-error.js'
import type {User} from '../../store/repositories/users.js'
import {safeEqual} from '../shared/secrets.js'
import type {UsersService} from '../users/users-service.js'
import type {Deps} from '../deps.js'
import {createDeviceSignIn} from './device-sign-in.js'
import {loginExpired, loginFlowStore} from './login-flow-store.js'
import {createOidcClient, oidcFailed, providerErrorOf} from './oidc.js'
import type {Sessions} from './sessions.js'
import {challengeOf, cliTargetOf, returnToOf, withQuery, type CliTarget} from './sign-in-input.js'

/** How long a browser may take at the provider. */
export const WEB_FLOW_TTL_MS = 10 * 60_000
/** How long the CLI has to redeem its one-time code (it does so at once). */
export const CLI_CODE_TTL_MS = 2 * 60_000

interface WebFlow {
  verifier: string
  nonce: string
  returnTo: string
  cli: CliTarget | null
}

interface CliCode {
  userId: string
  challenge: string
}

export interface SignedIn {
  token: string
  expiresAt: string
  user: {id: string; email: string; displayName: string; systemAdmin: boolean}
}

export interface StartWebInput {
  return_to?: string
  cli_redirect?: string
  cli_state?: string
  cli_challenge?: string
}

/** Where the callback sends the browser, and the web session to set as a cookie (web flows). */
export interface WebFinish {
  redirect: string
  session: {token: string; expiresAt: string} | null
}

export const userView = (u: User): SignedIn['user'] => ({id: u.id, email: u.email, displayName: u.displayName, systemAdmin: u.systemAdmin})

/**
 * Interactive sign-in with OpenID Connect: the web flow (authorization code + PKCE, ending in the
 * `svc_session` cookie), its CLI variant (the Hub hands a one-time code to the CLI's loopback
 * listener, redeemed with the CLI's own PKCE verifier) and the device flow.
 */
export function createSignIn(deps: Deps, svc: {users: UsersService; sessions: Sessions}) {
  const oidc = createOidcClient(deps)
  const flows = loginFlowStore(deps)

  async function startWeb(input: StartWebInput): Promise<{url: string; state: string; expiresAt: string}> {
    const cli = cliTargetOf(input)
    if (cli && input.return_to !== undefined) {
      throw new AppError('validation_error', 'invalid request: return_to does not apply to a CLI sign-in', {fields: [{path: 'querystring.return_to', message: 'does not apply with cli_redirect'}]})
    }
    const returnTo = returnToOf(input.return_to, deps.config.publicUrl)
    const {oc, conf} = await oidc.client()
    const data: WebFlow = {verifier: oc.randomPKCECodeVerifier(), nonce: oc.randomNonce(), returnTo, cli}
    const {handle: state, expiresAt} = await flows.create('web', data, WEB_FLOW_TTL_MS)
    const url = oc.buildAuthorizationUrl(conf, {
      redirect_uri: oidc.redirectUri(),
      scope: oidc.scope(),
      state,
      nonce: data.nonce,
      code_challenge: await oc.calculatePKCECodeChallenge(data.verifier),
      code_challenge_method: 'S256',
    })
    return {url: url.toString(), state, expiresAt}
  }

  /**
   * Finishes a web flow at the callback. `browserState` is the state the Hub left in this browser
   * at the start: a callback carried to another browser (login CSRF) is refused. Failures of a CLI
   * flow are sent to the CLI's loopback as `error`/`error_description`, so it stops waiting.
   */
  async function finishWeb(query: Record<string, string | undefined>, browserState: string | undefined): Promise<WebFinish> {
    oidc.ensureConfigured()
    const state = query.state
    if (!state) throw new AppError('invalid_request', 'the callback carries no state; start the sign-in again')
    const flow = await flows.find<WebFlow>('web', state)
    // Unknown or already used: there is no one to tell but this browser.
    if (!flow || flow.consumedAt) throw loginExpired()
    const cli = flow.data.cli
    try {
      flows.check(flow)
      if (!browserState || !safeEqual(browserState, state)) {
        throw new AppError('login_expired', 'this sign-in was started in another browser, or its cookie was lost; start again')
      }
      await flows.consume(flow)
      const {oc, conf} = await oidc.client()
      const current = new URL(oidc.redirectUri())
      for (const [k, v] of Object.entries(query)) if (v !== undefined) current.searchParams.set(k, v)
      let tokens
      try {
        tokens = await oc.authorizationCodeGrant(conf, current, {pkceCodeVerifier: flow.data.verifier, expectedState: state, expectedNonce: flow.data.nonce})
      } catch (err) {
        if (providerErrorOf(err)?.error === 'access_denied') throw new AppError('access_denied', 'the sign-in was declined at the OpenID provider')
        throw oidcFailed(err, 'the sign-in')
      }
      const user = await svc.users.signInFromOidc(await oidc.identityOf(tokens))
      deps.logger.info({userId: user.id, via: cli ? 'cli' : 'web'}, 'signed in')
      if (cli) {
        const {handle: code} = await flows.create('cli_code', {userId: user.id, challenge: cli.challenge} satisfies CliCode, CLI_CODE_TTL_MS)
        return {redirect: withQuery(cli.redirect, {code, state: cli.state}), session: null}
      }
      return {redirect: flow.data.returnTo, session: await svc.sessions.create(user.id, 'web')}
    } catch (err) {
      if (!cli || !(err instanceof AppError)) throw err
      return {redirect: withQuery(cli.redirect, {error: err.code, error_description: err.message, state: cli.state}), session: null}
    }
  }

  /** Redeems the one-time code the CLI's loopback received, proving possession of the verifier. */
  async function exchangeCliCode(code: string, verifier: string): Promise<SignedIn> {
    oidc.ensureConfigured()
    const flow = await flows.findUsable<CliCode>('cli_code', code)
    // Single use whatever the outcome: a wrong verifier burns the code.
    await flows.consume(flow)
    if (!safeEqual(challengeOf(verifier), flow.data.challenge)) {
      throw new AppError('invalid_verifier', 'the verifier does not match the challenge this sign-in began with; start again')
    }
    return sessionFor(flow.data.userId)
  }

  async function sessionFor(userId: string): Promise<SignedIn> {
    const user = await deps.store.users.get(userId)
    if (!user) throw new AppError('login_expired', 'the user of this sign-in no longer exists')
    if (user.status !== 'active') throw new AppError('user_suspended', 'this user is suspended')
    const session = await svc.sessions.create(user.id, 'cli')
    return {...session, user: userView(user)}
  }

  return {
    /** Cookies are marked Secure when users reach the Hub over https. */
    secureCookies: new URL(deps.config.publicUrl).protocol === 'https:',
    startWeb,
    finishWeb,
    exchangeCliCode,
    describe: () => oidc.describe(),
    ...createDeviceSignIn(deps, {oidc, flows, users: svc.users, sessionFor}),
  }
}

export type SignIn = ReturnType<typeof createSignIn>
