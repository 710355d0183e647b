import {isIPv4, isIPv6} from 'node:net'

/**
 * Which webhook targets the Hub refuses unless a channel sets `allow_private: true` (CONTRACT
 * "Isolation"): an agent shares the Hub's host and network, so a Hub that POSTs wherever a
 * setting says would reach the host's loopback services, a cloud metadata endpoint or the LAN.
 * Shared by the settings schema (a URL naming such an address or `localhost` is refused when
 * saved) and the webhook sender (the address a name resolves to is checked when delivering).
 */

/** What kind of non-public address `ip` is (`loopback`, `private`, ...), or null for a public one. */
export function privateAddressKind(ip: string): string | null {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (isIPv4(bare)) return v4Kind(bare.split('.').map(Number))
  if (isIPv6(bare)) return v6Kind(v6Words(bare))
  return null
}

function v4Kind([a, b]: number[]): string | null {
  if (a === 127) return 'loopback'
  if (a === 0) return 'unspecified'
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private'
  if (a === 169 && b === 254) return 'link-local'
  if (a === 100 && b >= 64 && b <= 127) return 'shared (CGNAT)'
  // Multicast, reserved and broadcast: never a webhook receiver.
  if (a >= 224) return 'multicast or reserved'
  return null
}

/** The eight 16-bit words of an IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function v6Words(addr: string): number[] {
  let text = addr.toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number)
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined]
  const h = head ? head.split(':') : []
  const t = tail ? tail.split(':') : []
  const words = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t]
  return words.map((w) => parseInt(w, 16))
}

function v6Kind(w: number[]): string | null {
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0)
  const v4 = (hi: number, lo: number) => v4Kind([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])
  if (zeros(0, 8)) return 'unspecified'
  if (zeros(0, 7) && w[7] === 1) return 'loopback'
  if ((w[0] & 0xffc0) === 0xfe80) return 'link-local'
  if ((w[0] & 0xffc0) === 0xfec0) return 'site-local'
  if ((w[0] & 0xfe00) === 0xfc00) return 'private (unique local)'
  if ((w[0] & 0xff00) === 0xff00) return 'multicast or reserved'
  // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16).
  if (zeros(0, 5) && w[5] === 0xffff) return v4(w[6], w[7])
  if (zeros(0, 6)) return v4(w[6], w[7])
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4(w[6], w[7])
  if (w[0] === 0x2002) return v4(w[1], w[2])
  return null
}

/** A URL's host as compared: lower case, no brackets, no trailing dot. */
export function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '')
}

/**
 * Why a webhook URL names a non-public target by itself (an address literal, `localhost` or a
 * `*.localhost` name), or null. A name that only resolves to one is caught when delivering.
 */
export function privateTargetOf(url: string): string | null {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return null
  }
  const host = hostOf(u)
  if (host === 'localhost' || host.endsWith('.localhost')) return `names the loopback host ${host}`
  const kind = privateAddressKind(host)
  return kind ? `is on a ${kind} address (${host})` : null
}

/** The problem of one channel (`{url, allow_private?}`), as the settings validation reports it; null when none. */
export function channelTargetProblem(channel: {url?: unknown; allow_private?: unknown}): string | null {
  if (channel.allow_private === true || typeof channel.url !== 'string') return null
  const why = privateTargetOf(channel.url)
  return why ? `${why}: a notification channel may not target a loopback, link-local or private address unless it sets allow_private: true` : null
}
