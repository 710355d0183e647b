import {AppError} from '../../api/app-error.js'

/**
 * Refused credentials per client address (docs/architecture.md "Connection limits"): after
 * `max` 401s from one address within `windowMs`, every credential that address presents is
 * answered 429 `quota_exceeded` until the window that began with its first failure ends, so a
 * token cannot be guessed at speed. Counted per Hub process.
 */
export class AuthFailureThrottle {
  private readonly byAddress = new Map<string, {count: number; since: number}>()

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws 429 when `address` is throttled. */
  check(address: string) {
    const e = this.current(address)
    if (!e || e.count < this.max) return
    const retryAfterSeconds = Math.max(1, Math.ceil((e.since + this.windowMs - this.now()) / 1000))
    throw new AppError('quota_exceeded', `too many refused credentials from this address; try again in ${retryAfterSeconds} s`, {retryAfterSeconds, limit: this.max, windowSeconds: Math.round(this.windowMs / 1000)})
  }

  /** Records one refused credential from `address`. */
  fail(address: string) {
    const e = this.current(address)
    if (e) e.count++
    else this.byAddress.set(address, {count: 1, since: this.now()})
    // Bounded memory: an address whose window has passed is forgotten on the next failure sweep.
    if (this.byAddress.size > 10_000) for (const [k, v] of this.byAddress) if (v.since + this.windowMs <= this.now()) this.byAddress.delete(k)
  }

  private current(address: string) {
    const e = this.byAddress.get(address)
    if (e && e.since + this.windowMs <= this.now()) {
      this.byAddress.delete(address)
      return undefined
    }
    return e
  }
}
