import {AppError} from '../../api/app-error.js'
import type {UsersService} from '../users/users-service.js'
import type {Deps} from '../deps.js'
import {loginExpired, type LoginFlowStore} from './login-flow-store.js'
import {DEVICE_CODE_GRANT, oidcFailed, providerErrorOf, type OidcClient, type Tokens} from './oidc.js'
import type {SignedIn} from './sign-in.js'
import type {DeviceStartDto as DeviceStart} from '../../api/dto.js'

/** A device sign-in never outlives this, whatever the provider allows. */
export const MAX_DEVICE_TTL_MS = 30 * 60_000
// RFC 8628 section 3.2: the default when the provider names no interval.
const DEFAULT_INTERVAL_S = 5

interface DeviceFlow {
  deviceCode: string
  interval: number
}


/**
 * The device authorization grant (RFC 8628) brokered by the Hub: the Hub starts it at the
 * provider and keeps the provider's device code in the database; the CLI polls the Hub with
 * the Hub's own handle, and each poll is one token request at the provider.
 */
export function createDeviceSignIn(
  deps: Deps,
  x: {oidc: OidcClient; flows: LoginFlowStore; users: UsersService; sessionFor: (userId: string) => Promise<SignedIn>},
) {
  const {oidc, flows} = x

  async function startDevice(): Promise<DeviceStart> {
    const {oc, conf} = await oidc.client()
    if (!conf.serverMetadata().device_authorization_endpoint) {
      throw new AppError('device_flow_unsupported', 'the OpenID provider of this Hub offers no device sign-in; sign in with a browser instead')
    }
    let res
    try {
      res = await oc.initiateDeviceAuthorization(conf, {scope: oidc.scope()})
    } catch (err) {
      throw oidcFailed(err, 'to start a device sign-in')
    }
    const interval = res.interval ?? DEFAULT_INTERVAL_S
    const ttlMs = Math.min(res.expires_in * 1000, MAX_DEVICE_TTL_MS)
    const {handle} = await flows.create('device', {deviceCode: res.device_code, interval} satisfies DeviceFlow, ttlMs)
    return {
      deviceCode: handle,
      userCode: res.user_code,
      verificationUri: res.verification_uri,
      verificationUriComplete: res.verification_uri_complete ?? null,
      interval,
      expiresIn: Math.floor(ttlMs / 1000),
    }
  }

  /** One poll: a session once the user approved, else the pending, slow-down or final error. */
  async function pollDevice(handle: string): Promise<SignedIn> {
    oidc.ensureConfigured()
    const flow = await flows.findUsable<DeviceFlow>('device', handle)
    const {oc, conf} = await oidc.client()
    let tokens: Tokens
    try {
      tokens = await oc.genericGrantRequest(conf, DEVICE_CODE_GRANT, {device_code: flow.data.deviceCode})
    } catch (err) {
      const interval = flow.data.interval
      switch (providerErrorOf(err)?.error) {
        case 'authorization_pending':
          throw new AppError('authorization_pending', 'waiting for the sign-in to be approved in the browser', {interval})
        case 'slow_down': {
          const slower = interval + 5
          await flows.update(flow, {...flow.data, interval: slower})
          throw new AppError('slow_down', `polling too often; wait ${slower} seconds between polls`, {interval: slower})
        }
        case 'access_denied':
          await flows.consume(flow)
          throw new AppError('access_denied', 'the sign-in was declined at the OpenID provider')
        case 'expired_token':
          await flows.consume(flow)
          throw loginExpired('the device code expired before it was approved; start again')
        default:
          throw oidcFailed(err, 'the device sign-in')
      }
    }
    // The provider issues tokens once per device code; consuming keeps the Hub's handle single use too.
    await flows.consume(flow)
    const user = await x.users.signInFromOidc(await oidc.identityOf(tokens))
    deps.logger.info({userId: user.id, via: 'device'}, 'signed in')
    return x.sessionFor(user.id)
  }

  return {startDevice, pollDevice}
}
