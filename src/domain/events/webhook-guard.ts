import {lookup as dnsLookup, type LookupAddress} from 'node:dns'
import type {LookupFunction} from 'node:net'
import {AppError} from '../../api/app-error.js'
import {channelTargetProblem, privateAddressKind, privateTargetOf} from '../../api/webhook-targets.js'

/**
 * A settings save whose notification channels target a loopback, link-local or private address
 * without `allow_private: true`: 422 `validation_failed` (CONTRACT "Isolation"), each problem
 * under the `notification_channels` section like any other invalid value.
 */
export function refusePrivateChannels(channels: unknown): void {
  if (!Array.isArray(channels)) return
  const issues = channels.flatMap((c, i) => {
    const problem = c && typeof c === 'object' ? channelTargetProblem(c as Record<string, unknown>) : null
    return problem ? [{key: `server.notification_channels.${i}.url`, message: problem}] : []
  })
  if (!issues.length) return
  throw new AppError('validation_failed', `invalid settings: ${issues.map((i) => `${i.key}: ${i.message}`).join('; ')}`, {sections: {notification_channels: issues}}, 422)
}

/** How a name is resolved (the system resolver; tests give their own). */
export type Resolver = (hostname: string, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void

export const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, {all: true, verbatim: true}, callback)

/** Thrown (as a delivery error) when a target is refused; the message says why. */
export class PrivateTargetError extends Error {
  readonly code = 'EPRIVATETARGET'
}

/**
 * The `lookup` of a webhook POST. It resolves the name once, refuses it when any address it
 * resolves to is not public (unless the channel allows private targets), and hands the socket
 * exactly the addresses it checked: the connection is pinned to them, so a name that answers a
 * public address to the check and a private one to the connect (DNS rebinding) gets nowhere.
 * Address literals never reach a lookup: `checkLiteral` covers them.
 */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (err, found) => {
      const cb = callback as (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void
      if (err) return cb(err, '', 0)
      const family = options.family === 4 || options.family === 6 ? options.family : 0
      const addresses = family ? found.filter((a) => a.family === family) : found
      if (!addresses.length) return cb(Object.assign(new Error(`${hostname} has no address`), {code: 'ENOTFOUND'}), '', 0)
      const bad = allowPrivate ? undefined : addresses.find((a) => privateAddressKind(a.address))
      if (bad) return cb(new PrivateTargetError(`refused: ${hostname} resolves to a ${privateAddressKind(bad.address)} address (${bad.address}); set allow_private: true on the channel to deliver there`), '', 0)
      if (options.all) return cb(null, addresses)
      cb(null, addresses[0].address, addresses[0].family)
    })
  }
}

/** Refuses a URL that names a non-public target itself (an address literal, `localhost`), unless allowed. */
export function checkLiteral(url: string, allowPrivate: boolean): void {
  if (allowPrivate) return
  const why = privateTargetOf(url)
  if (why) throw new PrivateTargetError(`refused: the URL ${why}; set allow_private: true on the channel to deliver there`)
}
