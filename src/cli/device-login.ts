import {AppError} from '../api/app-error.js'
import type {HubClient, SignedIn} from '../client/hub-client.js'

export interface DeviceLoginOptions {
  client: HubClient
  /** Opens the verification page when a browser is at hand; false otherwise. */
  open: ((url: string) => Promise<boolean>) | null
  notify: (text: string) => void
  sleep?: (ms: number) => Promise<void>
}

const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/**
 * Device sign-in (RFC 8628) through the Hub: shows the code and the page to enter it on (any
 * device), then polls the Hub at the interval it names, slowing down when told to, until the
 * user approves, declines, or the code expires.
 */
export async function deviceLogin(o: DeviceLoginOptions): Promise<SignedIn> {
  const sleep = o.sleep ?? wait
  const d = await o.client.startDeviceLogin()
  o.notify(`To sign in, open ${d.verificationUri} on any device and enter the code:\n\n  ${d.userCode}\n`)
  if (o.open && d.verificationUriComplete) await o.open(d.verificationUriComplete)
  o.notify('Waiting for the sign-in to be approved...')
  let interval = d.interval
  const deadline = Date.now() + d.expiresIn * 1000
  for (;;) {
    await sleep(interval * 1000)
    if (Date.now() > deadline) throw new AppError('login_expired', 'the device code expired before the sign-in was approved; run svc auth login --device again')
    try {
      return await o.client.pollDeviceLogin(d.deviceCode)
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      if (err.code === 'authorization_pending') continue
      if (err.code === 'slow_down') {
        interval = Number(err.details?.interval) || interval + 5
        continue
      }
      throw err
    }
  }
}
